package dev.a2.benchmarks; public class Benchmarks { public static void main(String[] a) {} }
