package dev.a2.benchmarks;

import javax.sql.DataSource;

import dev.a2.Contract;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The application the web benchmarks run, twice, on one database: A2's routes, and the hand-written
 * push route they are measured beside ({@link BaselinePush}). A WebFlux application on Reactor Netty,
 * though Spring MVC and Tomcat are on the benchmark's classpath too, for {@link MvcBenchApplication}.
 * No component scan: that application's controller is not one of this one's.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration(excludeName = "org.springframework.boot.tomcat.autoconfigure.reactive.TomcatReactiveWebServerAutoConfiguration")
public class BenchApplication {

	/** Runs it alone, for load from outside the JVM (wrk): pass {@code --spring.datasource.url=…}. */
	public static void main(String[] args) {
		new SpringApplicationBuilder(BenchApplication.class).web(WebApplicationType.REACTIVE).run(args);
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
