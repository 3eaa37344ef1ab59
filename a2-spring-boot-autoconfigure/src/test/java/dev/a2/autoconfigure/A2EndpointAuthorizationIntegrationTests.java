package dev.a2.autoconfigure;

import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.store.DeadLetter;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Permission;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code a2} actuator endpoint asks the application's authorizer, so its per-session rules hold
 * there: a user whose authorizer lets him reach only his own sessions reads and redrives only those,
 * never the views across sessions; over JMX, where there is no caller, the authorizer is asked with
 * none.
 */
class A2EndpointAuthorizationIntegrationTests {

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("endpointauth", 4);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class,
				JacksonAutoConfiguration.class, A2EndpointAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=a2", "a2.drain.sweep-interval=100ms")
		.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
		.withBean(Contract.class, () -> Contract.builder("chat").event("said", String.class).build())
		.withBean(Consumer.class, () -> Consumer.builder("chat", "fragile").run((context) -> {
			throw new NonRetriableException("cannot take " + context.event().id());
		}));

	private static final Principal ALICE = () -> "alice";

	private static final Principal BOB = () -> "bob";

	/** Each user reaches the sessions named for them, whatever the permission. */
	private ApplicationContextRunner ownSessions() {
		return this.runner.withBean(A2Authorizer.class, () -> (caller, permission, contract, session) -> caller != null
				&& session.startsWith("user-" + caller.getName() + "-"));
	}

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	void aSessionsEventsAndRedriveFollowThePerSessionRules() {
		ownSessions().run((context) -> {
			A2Server a2 = context.getBean(A2Server.class);
			A2Endpoint endpoint = context.getBean(A2Endpoint.class);
			a2.session("chat", "user-alice-1").append(NewEvent.of("said", "my secret", "s-1"));
			DeadLetter dead = await().atMost(Duration.ofSeconds(30))
				.until(() -> a2.deadLetters("chat", "user-alice-1", "fragile", 10), (letters) -> letters.size() == 1)
				.get(0);
			assertRefused(endpoint.part("events", "chat", "user-alice-1", null, null, null, BOB), 403, "FORBIDDEN");
			assertRefused(endpoint.part("dead-letters", "chat", "user-alice-1", null, null, null, BOB), 403, "FORBIDDEN");
			assertRefused(endpoint.redrive("redrive", "chat", "user-alice-1", "fragile", String.valueOf(dead.index()), "skip", BOB), 403,
					"FORBIDDEN");
			// over JMX: no caller
			assertRefused(endpoint.part("events", "chat", "user-alice-1", null, null, null, null), 401, "UNAUTHORIZED");
			assertRefused(endpoint.redrive("redrive", "chat", "user-alice-1", "fragile", String.valueOf(dead.index()), "skip", null), 401,
					"UNAUTHORIZED");
			assertThat(a2.deadLetters("chat", "user-alice-1", "fragile", 10)).hasSize(1);
			// her own session: she reads it and redrives it
			assertThat(endpoint.part("events", "chat", "user-alice-1", null, null, null, ALICE).getStatus()).isEqualTo(200);
			assertThat(endpoint.redrive("redrive", "chat", "user-alice-1", "fragile", String.valueOf(dead.index()), "skip", ALICE).getStatus())
				.isEqualTo(200);
			assertThat(a2.deadLetters("chat", "user-alice-1", "fragile", 10)).isEmpty();
		});
	}

	@Test
	void viewsAcrossSessionsAreRefusedUnlessTheAuthorizerAllowsThem() {
		ownSessions().run((context) -> {
			A2Endpoint endpoint = context.getBean(A2Endpoint.class);
			// a four-argument authorizer is asked about one session at a time: across sessions it says no
			assertRefused(endpoint.overview(ALICE), 403, "FORBIDDEN");
			assertRefused(endpoint.part("dead-letters", null, null, null, null, null, ALICE), 403, "FORBIDDEN");
			assertRefused(endpoint.part("dead-letters", "chat", null, null, null, null, ALICE), 403, "FORBIDDEN");
			assertRefused(endpoint.overview(null), 401, "UNAUTHORIZED");
			// the console's page holds no data of its own
			assertThat(endpoint.part("console", null, null, null, null, null, null).getStatus()).isEqualTo(404);
		});
		this.runner.withBean(A2Authorizer.class, A2Authorizer::permitAll).run((context) -> {
			A2Endpoint endpoint = context.getBean(A2Endpoint.class);
			assertThat(endpoint.overview(null).getStatus()).isEqualTo(200);
			assertThat(endpoint.part("dead-letters", null, null, null, null, null, null).getStatus()).isEqualTo(200);
		});
	}

	@Test
	void anOperatorPermissionIsAskedOfTheAuthorizer() {
		List<A2Permission> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
		this.runner.withBean(A2Authorizer.class, () -> (caller, permission, contract, session) -> {
			asked.add(permission);
			return false;
		}).run((context) -> {
			context.getBean(A2Endpoint.class).part("events", "chat", "user-alice-1", null, null, null, ALICE);
			assertThat(asked).containsExactly(A2Permission.OPERATE);
		});
	}

	@SuppressWarnings("unchecked")
	private static void assertRefused(WebEndpointResponse<?> response, int status, String code) {
		assertThat(response.getStatus()).isEqualTo(status);
		Map<String, Object> error = (Map<String, Object>) ((Map<String, Object>) response.getBody()).get("error");
		assertThat(error).containsEntry("code", code);
		assertThat((String) error.get("message")).doesNotContain("secret");
	}

}
