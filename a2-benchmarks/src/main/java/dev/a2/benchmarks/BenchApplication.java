package dev.a2.benchmarks;

import dev.a2.Contract;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** The application the web benchmarks run, twice, on one database: A2's routes and nothing else. */
@SpringBootApplication
public class BenchApplication {

	@Bean
	Contract bench() {
		return Contract.builder("bench").event("tick", Benchmarks.Tick.class).build();
	}

}
