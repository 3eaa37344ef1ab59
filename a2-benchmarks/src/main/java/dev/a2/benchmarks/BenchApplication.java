package dev.a2.benchmarks;

import dev.a2.Contract;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** The application the web benchmarks run, twice, on one database: A2's routes and nothing else. */
@SpringBootApplication
public class BenchApplication {

	/** Runs it alone, for load from outside the JVM (wrk): pass {@code --spring.datasource.url=…}. */
	public static void main(String[] args) {
		org.springframework.boot.SpringApplication.run(BenchApplication.class, args);
	}

	@Bean
	Contract bench() {
		return Contract.builder("bench").event("tick", Benchmarks.Tick.class).build();
	}

}
