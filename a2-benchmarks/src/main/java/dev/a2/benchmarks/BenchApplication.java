package dev.a2.benchmarks;

import javax.sql.DataSource;

import dev.a2.Contract;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The application the web benchmarks run, twice, on one database: A2's routes, and the hand-written
 * push route they are measured beside ({@link BaselinePush}).
 */
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

	@Bean
	RouterFunction<ServerResponse> baselinePush(DataSource dataSource, JsonMapper json) {
		return new BaselinePush(dataSource, json).route();
	}

}
