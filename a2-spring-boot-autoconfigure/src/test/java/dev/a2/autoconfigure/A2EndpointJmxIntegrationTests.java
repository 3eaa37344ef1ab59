package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jmx.JmxEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jmx.JmxAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code a2} endpoint through a real MBean server, as jconsole or a script reaches it: operations a
 * JMX client can call (no principal, no HTTP selector among their arguments), answering what HTTP answers
 * as its body, errors in A2's shape.
 */
class A2EndpointJmxIntegrationTests {

	private static final String[] FIVE_TEXTS = { String.class.getName(), String.class.getName(),
			String.class.getName(), String.class.getName(), String.class.getName() };

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("jmx", 4);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JmxAutoConfiguration.class, EndpointAutoConfiguration.class,
				JmxEndpointAutoConfiguration.class, JacksonAutoConfiguration.class, A2AutoConfiguration.class,
				A2AuthorizationAutoConfiguration.class, A2EndpointAutoConfiguration.class))
		.withPropertyValues("spring.jmx.enabled=true", "spring.jmx.unique-names=true",
				"management.endpoints.jmx.exposure.include=a2")
		.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
		// JMX has no caller: an application that operates A2 over JMX lets the null caller operate
		.withBean(A2Authorizer.class, A2Authorizer::permitAll)
		.withBean(Contract.class, () -> Contract.builder("chat").event("said", String.class).build())
		.withBean(Consumer.class, () -> Consumer.builder("chat", "fragile").run((context) -> {
			throw new NonRetriableException("refused");
		}));

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	@SuppressWarnings("unchecked")
	void operationsAnswerTheirBodiesAndErrorsInA2sShape() {
		this.runner.run((context) -> {
			A2Server a2 = context.getBean(A2Server.class);
			a2.session("chat", "s-1").append(NewEvent.of("said", "hello", "e-1"));
			await().atMost(Duration.ofSeconds(30)).until(() -> a2.deadLetters("chat", "s-1", "fragile", 10).size() == 1);
			MBeanServer server = context.getBean(MBeanServer.class);
			Set<ObjectName> names = server.queryNames(new ObjectName("org.springframework.boot:type=Endpoint,name=A2,*"), null);
			assertThat(names).hasSize(1);
			ObjectName a2Endpoint = names.iterator().next();

			Map<String, Object> overview = (Map<String, Object>) server.invoke(a2Endpoint, "overview", new Object[0],
					new String[0]);
			assertThat(overview).containsKeys("contracts", "consumers", "drains").doesNotContainKeys("body", "status");
			List<Map<String, Object>> letters = (List<Map<String, Object>>) server.invoke(a2Endpoint, "part",
					new Object[] { "dead-letters", "chat", "s-1", null, null, null },
					new String[] { String.class.getName(), String.class.getName(), String.class.getName(),
							String.class.getName(), String.class.getName(), String.class.getName() });
			assertThat(letters).singleElement().satisfies((letter) -> assertThat(letter).containsEntry("consumer", "fragile"));

			Map<String, Object> unknown = (Map<String, Object>) server.invoke(a2Endpoint, "redrive",
					new Object[] { "nope", "s-1", "fragile", "1", "skip" }, FIVE_TEXTS);
			assertThat(unknown).containsOnlyKeys("error");
			assertThat((Map<String, Object>) unknown.get("error")).containsEntry("code", "UNKNOWN_CONTRACT").containsKey("message");
			Map<String, Object> wrongAction = (Map<String, Object>) server.invoke(a2Endpoint, "redrive",
					new Object[] { "chat", "s-1", "fragile", "1", "later" }, FIVE_TEXTS);
			assertThat((Map<String, Object>) wrongAction.get("error")).containsEntry("code", "INVALID_PAYLOAD");
			assertThat(a2.deadLetters("chat", "s-1", "fragile", 10)).hasSize(1);

			Map<String, Object> skipped = (Map<String, Object>) server.invoke(a2Endpoint, "redrive",
					new Object[] { "chat", "s-1", "fragile", "1", "skip" }, FIVE_TEXTS);
			assertThat(skipped).containsExactly(Map.entry("redriven", true));
			assertThat(a2.deadLetters("chat", "s-1", "fragile", 10)).isEmpty();
		});
	}

}
