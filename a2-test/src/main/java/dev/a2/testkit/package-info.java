/**
 * The test kit for A2 consumers: {@link dev.a2.testkit.A2Test} (Spring Boot) or
 * {@link dev.a2.testkit.A2TestExtension} (plain JUnit 5) start A2 on a real PostgreSQL with a manual
 * drainer and a virtual clock; {@link dev.a2.testkit.A2TestKit} drains, moves time and injects
 * faults; {@link dev.a2.testkit.A2Assertions} asserts; {@link dev.a2.testkit.ConsumerRun} unit-tests
 * a consumer's code without a database.
 */
@NullMarked
package dev.a2.testkit;

import org.jspecify.annotations.NullMarked;
