package dev.a2.web;

import dev.a2.Contract;
import dev.a2.Reducer;
import jakarta.validation.constraints.NotBlank;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * A WebFlux application with one chat contract, served by A2's routes as a user would; A2 wired by hand
 * ({@link HandWiredA2}), as this module has no auto-configuration. Spring Security is on the test
 * classpath for {@link TwoUsersIntegrationTests}, which turns it on itself: Boot's defaults for it
 * (every route behind a generated password) stay off for the other tests.
 */
@SpringBootApplication(excludeName = {
		"org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration" })
@Import(HandWiredA2.class)
public class ChatApplication {

	public record MessageSent(@NotBlank String text, @NotBlank String author) {
	}

	public record Summary(int messages, String last) {
	}

	@Bean
	Contract chat() {
		return Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.presence("typing", Boolean.class)
			.presence("status", String.class)
			.reducer("summary", Reducer.of(Summary.class, new Summary(0, ""), (summary, event) -> new Summary(
					summary.messages() + 1, event.payload(MessageSent.class).text())))
			.build();
	}

	/**
	 * Event loops of this application's own. The global ones Reactor Netty shares in a JVM are
	 * disposed when any application on them stops, under the other instances a test runs and their
	 * clients.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "reactor.netty.http.server.HttpServer")
	static class OwnEventLoops {

		@Bean
		ReactorResourceFactory reactorResourceFactory() {
			ReactorResourceFactory factory = new ReactorResourceFactory();
			factory.setUseGlobalResources(false);
			return factory;
		}

	}

}
