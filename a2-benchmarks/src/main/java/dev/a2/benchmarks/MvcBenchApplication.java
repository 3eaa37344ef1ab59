package dev.a2.benchmarks;

import javax.sql.DataSource;

import dev.a2.Contract;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The web benchmark's application as a Spring MVC one on Tomcat: A2's endpoints are the servlet the
 * starter mounts at {@code /a2/*}, beside what an MVC application would write instead of A2's push
 * ({@link BaselineController}). Run with {@code spring.main.web-application-type=servlet}: WebFlux is on
 * the classpath too.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class MvcBenchApplication {

	@Bean
	Contract bench() {
		return Contract.builder("bench").event("tick", Benchmarks.Tick.class).build();
	}

	@Bean
	BaselineController baselineController(DataSource dataSource, JsonMapper json) {
		return new BaselineController(new BaselinePush(dataSource, json));
	}

}
