package dev.a2.autoconfigure;

import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.PayloadValidator;
import dev.a2.Reducer;
import dev.a2.Session;
import dev.a2.store.EventStore;
import dev.a2.store.SnapshotStore;
import dev.a2.store.postgres.PostgresEventStore;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.test.TestPostgres;
import jakarta.validation.constraints.NotBlank;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.mock;

class A2AutoConfigurationIntegrationTests {

	record Said(@NotBlank String text) {
	}

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("autoconfig", 4);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, JacksonAutoConfiguration.class,
				ValidationAutoConfiguration.class))
		// not the pool itself: a context would close it, and each test starts several contexts
		.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource));

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	void contractBeansGetAServerOnTheMigratedDatabase() {
		this.runner.withUserConfiguration(ChatContract.class).run((context) -> {
			A2Server server = context.getBean(A2Server.class);
			assertThat(server.contracts()).extracting(Contract::name).containsExactly("chat");
			assertThat(server.session("chat", "s1").append(NewEvent.of("said", new Said("hi")))).hasSize(1);
			assertThat(server.session("chat", "s1").state("count").state()).isEqualTo(1);
		});
	}

	@Test
	void payloadsAreValidatedWithTheApplicationsValidator() {
		this.runner.withUserConfiguration(ChatContract.class).run((context) -> {
			assertThat(context).hasSingleBean(PayloadValidator.class);
			assertThatThrownBy(() -> context.getBean(A2Server.class).session("chat", "s1").append(NewEvent.of("said", new Said(""))))
				.isInstanceOf(A2Exception.class)
				.hasMessageContaining("events[0].payload.text: must not be blank");
		});
	}

	/**
	 * Payloads bind with the application's {@code JsonMapper}: with Spring Boot's settings a member the
	 * payload's record does not have is left out, and {@code spring.jackson.deserialization.fail-on-unknown-properties}
	 * makes it a refusal naming it (docs/PROTOCOL.md says both).
	 */
	@Test
	void aPayloadMemberItsRecordDoesNotHaveIsLeftOutOrRefusedAsTheApplicationsJacksonSettingsSay() {
		JsonNode misspelt = JsonMapper.builder().build().readTree("{\"text\":\"hi\",\"txt\":\"hello\"}");
		this.runner.withUserConfiguration(ChatContract.class).run((context) -> {
			Event stored = context.getBean(A2Server.class).session("chat", "lenient").append(new NewEvent("said", misspelt, null)).get(0);
			assertThat(stored.payload(Said.class)).isEqualTo(new Said("hi"));
		});
		this.runner.withUserConfiguration(ChatContract.class)
			.withPropertyValues("spring.jackson.deserialization.fail-on-unknown-properties=true")
			.run((context) -> {
				Session session = context.getBean(A2Server.class).session("chat", "strict");
				assertThatThrownBy(() -> session.append(new NewEvent("said", misspelt, null))).isInstanceOf(A2Exception.class)
					.hasMessageContaining("events[0].payload")
					.hasMessageContaining("txt");
				assertThat(session.history(0, 10).events()).isEmpty();
			});
	}

	@Test
	void withoutContractsThereIsNoServer() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(A2Server.class);
			assertThat(context).hasSingleBean(EventStore.class);
		});
	}

	@Test
	void userStoresWin() {
		EventStore events = mock(EventStore.class);
		SnapshotStore snapshots = mock(SnapshotStore.class);
		this.runner.withUserConfiguration(ChatContract.class)
			.withBean(EventStore.class, () -> events)
			.withBean(SnapshotStore.class, () -> snapshots)
			.run((context) -> {
				assertThat(context.getBean(EventStore.class)).isSameAs(events);
				assertThat(context.getBean(SnapshotStore.class)).isSameAs(snapshots);
			});
	}

	@Test
	void theAppendRoundsReachTheStoreAndAreChecked() {
		this.runner.run((context) -> assertThat(context.getBean(PostgresEventStore.class).appendRounds())
			.isEqualTo(PostgresEventStore.DEFAULT_APPEND_ROUNDS));
		this.runner.withPropertyValues("a2.store.append-rounds=16")
			.run((context) -> assertThat(context.getBean(PostgresEventStore.class).appendRounds()).isEqualTo(16));
		this.runner.withPropertyValues("a2.store.append-rounds=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("a2.store.append-rounds must be at least 1, was 0"));
	}

	/** Each would start and misbehave at run time, or fail there without naming the setting. */
	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			a2.presence.ttl=-60s        | a2.presence.ttl must be longer than 0 (such as 1s), was -60s
			a2.drain.sweep-interval=0s  | a2.drain.sweep-interval must be longer than 0 (such as 1s), was 0s
			a2.drain.lease=0s           | a2.drain.lease must be longer than 0 (such as 1s), was 0s
			a2.drain.retry-base=-1s     | a2.drain.retry-base must be 0 or longer, was -1s
			a2.drain.stop-grace=-10s    | a2.drain.stop-grace must be 0 or longer, was -10s
			a2.drain.concurrency=0      | a2.drain.concurrency must be at least 1, was 0
			a2.state.snapshot-every=0   | a2.state.snapshot-every must be at least 1, was 0
			a2.web.ping=-15s            | a2.web.ping must be longer than 0 (such as 1s), was -15s
			a2.web.poll=0s              | a2.web.poll must be longer than 0 (such as 1s), was 0s
			a2.web.reauthorize-every=-1m | a2.web.reauthorize-every must be 0 or longer, was -60s
			a2.web.store-threads=0      | a2.web.store-threads must be at least 1, was 0
			a2.web.max-push-bytes=0     | a2.web.max-push-bytes must be from 1B to 2147483647B (such as 256KB), was 0B
			a2.web.max-push-bytes=10GB  | a2.web.max-push-bytes must be from 1B to 2147483647B (such as 256KB), was 10737418240B
			a2.drain.retry-max=-1500ms  | a2.drain.retry-max must be 0 or longer, was -1500ms
			a2.ai.flush-interval=0ms    | a2.ai.flush-interval must be longer than 0 (such as 1s), was 0s
			a2.security.operator-authority= | a2.security.operator-authority must not be empty
			a2.ai.participant=          | a2.ai.participant must not be empty
			a2.drain.retry-max=500ms    | a2.drain.retry-max must be no shorter than a2.drain.retry-base (1s), was 500ms
			""")
	void aValueThatCannotWorkFailsTheStartUpSayingWhatItMustBe(String setting, String message) {
		this.runner.withUserConfiguration(ChatContract.class)
			.withPropertyValues(setting)
			.run((context) -> assertThat(context).hasFailed().getFailure().rootCause().hasMessage(message));
	}

	@Test
	void everyValueThatCannotWorkIsNamedAtOnce() {
		this.runner.withPropertyValues("a2.drain.sweep-interval=0s", "a2.web.store-threads=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("a2.drain.sweep-interval must be longer than 0 (such as 1s), was 0s; "
						+ "a2.web.store-threads must be at least 1, was 0"));
	}

	/**
	 * An application that starts with a value that cannot work sees it as Spring Boot shows a value that
	 * does not bind: in the "APPLICATION FAILED TO START" box, one line per property, not at the end of a
	 * chain of bean creation failures.
	 */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aValueThatCannotWorkIsReportedInTheStartUpFailureBox(CapturedOutput output) {
		SpringApplication application = new SpringApplication(ReportedStartUp.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of("a2.drain.max-failures", "0", "a2.drain.sweep-interval", "0s"));
		application.addInitializers((context) -> context.getBeanFactory()
			.registerSingleton("dataSource", new DelegatingDataSource(this.dataSource)));
		assertThatThrownBy(application::run).rootCause().isInstanceOf(IllegalArgumentException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("A2 cannot start with these settings:\n\n"
					+ "    a2.drain.max-failures must be at least 1, was 0\n"
					+ "    a2.drain.sweep-interval must be longer than 0 (such as 1s), was 0s\n")
			.contains("Change the properties named above");
	}

	@Test
	void propertiesBindWithTheirDefaults() {
		this.runner.run((context) -> {
			A2Properties properties = context.getBean(A2Properties.class);
			assertThat(properties.getStore().getInitializeSchema()).isEqualTo(A2Properties.SchemaInitialization.ALWAYS);
			assertThat(properties.getState().getSnapshotEvery()).isEqualTo(100);
			assertThat(properties.getState().getCacheSize()).isEqualTo(10_000);
		});
		this.runner.withPropertyValues("a2.state.snapshot-every=7", "a2.state.cache-size=0").run((context) -> {
			A2Properties properties = context.getBean(A2Properties.class);
			assertThat(properties.getState().getSnapshotEvery()).isEqualTo(7);
			assertThat(properties.getState().getCacheSize()).isZero();
		});
	}

	/**
	 * never leaves the database alone, and a start-up on tables nobody made fails saying so: it started,
	 * and then failed every push, read and sweep with "relation a2_session does not exist".
	 */
	@Test
	void initializeSchemaNeverLeavesTheDatabaseAloneAndStartsOnlyOnceTheMigrationsWereApplied() {
		this.runner.withPropertyValues("a2.store.initialize-schema=never").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageStartingWith("A2's tables lack migration(s) V1 (sessions events snapshots), V2 (")
				.hasMessageContaining("a2.store.initialize-schema=never leaves them to the application");
			assertThat(JdbcClient.create(this.dataSource)
				.sql("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'a2_%' AND table_schema = current_schema()")
				.query(Long.class)
				.single()).isZero();
		});
		PostgresSchema.migrate(this.dataSource);
		this.runner.withPropertyValues("a2.store.initialize-schema=never").withUserConfiguration(ChatContract.class)
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(A2SchemaInitializer.class);
				assertThat(context.getBean(A2Server.class).session("chat", "migrated").history(0, 10).events()).isEmpty();
			});
	}

	@Test
	void aFailingMigrationStopsTheStartUp() {
		JdbcClient.create(this.dataSource).sql("CREATE TABLE a2_session (broken int)").update();
		this.runner.withUserConfiguration(ChatContract.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("a2_session");
		});
	}

	@Test
	void withoutADataSourceStartUpFailsSayingWhatToAdd() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class))
			.withUserConfiguration(ChatContract.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("found no DataSource")
					.hasMessageContaining("set spring.datasource.url");
			});
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ A2AutoConfiguration.class, JacksonAutoConfiguration.class,
			ValidationAutoConfiguration.class })
	@Import(ChatContract.class)
	static class ReportedStartUp {

	}

	@Configuration(proxyBeanMethods = false)
	static class ChatContract {

		@Bean
		Contract chat() {
			return Contract.builder("chat")
				.event("said", Said.class)
				.reducer("count", Reducer.of(Integer.class, 0, (n, event) -> n + 1))
				.build();
		}

	}

}
