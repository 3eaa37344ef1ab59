package dev.a2.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.DrainActivity;
import dev.a2.DrainScheduling;
import dev.a2.DrainSettings;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.RunInterceptor;
import dev.a2.Session;
import dev.a2.autoconfigure.A2Endpoint.ConsumerView;
import dev.a2.autoconfigure.A2Endpoint.Overview;
import dev.a2.spring.A2Consumer;
import dev.a2.store.WorkStore;
import dev.a2.store.postgres.PostgresWorkStore;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @A2Consumer}, the drain properties and the actuator parts, in application contexts on a
 * real PostgreSQL.
 */
class A2ConsumerAutoConfigurationIntegrationTests {

	record Said(String text) {
	}

	record Stop(String reply) {
	}

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("consumers", 8);

	/** While set, the application's DataSource hands out no connection, as when PostgreSQL is unreachable. */
	private final AtomicBoolean unreachable = new AtomicBoolean();

	/** How many connections it refused. */
	private final AtomicInteger refusals = new AtomicInteger();

	private final DataSource outageDataSource = new DelegatingDataSource(this.dataSource) {
		@Override
		public Connection getConnection() throws SQLException {
			if (A2ConsumerAutoConfigurationIntegrationTests.this.unreachable.get()) {
				A2ConsumerAutoConfigurationIntegrationTests.this.refusals.incrementAndGet();
				throw new SQLTransientConnectionException("Connection is not available, request timed out after 30000ms");
			}
			return super.getConnection();
		}
	};

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class,
				JacksonAutoConfiguration.class,
				A2EndpointAutoConfiguration.class, A2HealthContributorAutoConfiguration.class,
				A2MetricsAutoConfiguration.class))
		// not the pool itself: a context would close it
		.withBean(DataSource.class, () -> this.outageDataSource)
		.withUserConfiguration(ChatContract.class);

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	void annotatedMethodsAndConsumerBeansAreRegistered() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withBean(Consumer.class, () -> Consumer.builder("chat", "plain").run((context) -> null))
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				assertThat(server.consumers()).extracting(Consumer::name).containsExactlyInAnyOrder("plain", "echo", "fixed");
				Consumer fixed = server.consumers().stream().filter((c) -> c.name().equals("fixed")).findFirst().orElseThrow();
				assertThat(fixed.lane()).isEqualTo(Lane.fixed("projection"));
				assertThat(fixed.backfill()).isTrue();
				assertThat(context).hasSingleBean(A2DrainLifecycle.class);
			});
	}

	@Test
	void onlyTheNamedConsumersAreRegisteredWhenSomeAreNamed() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withBean(Consumer.class, () -> Consumer.builder("chat", "plain").run((context) -> null))
			.withPropertyValues("a2.drain.consumers=echo,chat/plain")
			.run((context) -> assertThat(context.getBean(A2Server.class).consumers()).extracting(Consumer::name)
				.containsExactlyInAnyOrder("plain", "echo"));
	}

	/** A typo there would leave every consumer out: an instance that starts and runs nothing. */
	@Test
	void aConsumerNamedThatTheApplicationDoesNotHaveFailsTheStartUp() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withBean(Consumer.class, () -> Consumer.builder("chat", "plain").run((context) -> null))
			.withPropertyValues("a2.drain.consumers=echo,ecko,chat/plain,other/plain")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageStartingWith("a2.drain.consumers must name consumers of this application (chat/plain, ")
				.hasMessageEndingWith("), was echo,ecko,chat/plain,other/plain: no consumer is named ecko, other/plain"));
	}

	@Test
	void theApplicationsClockStampsEventsAndItsInterceptorsWrapRuns() {
		Instant then = Instant.parse("2031-02-03T04:05:06Z");
		List<String> intercepted = new CopyOnWriteArrayList<>();
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.consumers=echo")
			.withBean(Clock.class, () -> Clock.fixed(then, ZoneOffset.UTC))
			.withBean(RunInterceptor.class, () -> (run) -> {
				intercepted.add(run.consumer().name() + " " + run.event().type());
				return run.proceed();
			})
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				assertThat(server.clock().instant()).isEqualTo(then);
				Session session = server.session("chat", "clocked");
				assertThat(session.append(NewEvent.of("said", new Said("hi"))).get(0).createdAt()).isEqualTo(then);
				assertThat(server.awaitDrain((activity) -> activity.idle()
						&& session.history(0, 10).events().size() == 2, Duration.ofSeconds(20))).isTrue();
				assertThat(intercepted).containsExactly("echo said");
				assertThat(session.history(0, 10).events().get(1).createdAt()).isEqualTo(then);
			});
	}

	@Test
	void manualSchedulingSweepsNothingOnItsOwn() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.scheduling=manual", "a2.drain.sweep-interval=10ms")
			.run((context) -> {
				assertThat(context.getBean(A2Properties.class).getDrain().getScheduling()).isEqualTo(DrainScheduling.MANUAL);
				A2DrainLifecycle lifecycle = context.getBean(A2DrainLifecycle.class);
				assertThat(lifecycle.isRunning()).isTrue();
				A2Server server = context.getBean(A2Server.class);
				assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(5))).isTrue();
				assertThat(lifecycle.lastSweep()).isNull();
				// the application sweeps: however long without a sweep of A2's own, that is no failure
				Health aDayLater = new A2HealthIndicator(server, lifecycle, Duration.ofMillis(10),
						Clock.offset(Clock.systemUTC(), Duration.ofDays(1))).health(true);
				assertThat(aDayLater.getStatus()).isEqualTo(Status.UP);
				assertThat(aDayLater.getDetails()).containsEntry("lastSweep", "none yet");
			});
	}

	@Test
	void healthIsDownWhenNoSweepHasSucceededFor30SweepIntervalsSinceStartUp() {
		this.runner.withPropertyValues("a2.drain.sweep-interval=1h")
			.withBean(Consumer.class, () -> Consumer.builder("chat", "reader").run((context) -> null))
			.withInitializer((context) -> context.getBeanFactory().addBeanPostProcessor(new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String name) {
					return (bean instanceof PostgresWorkStore store) ? failingSweeps(store) : bean;
				}
			}))
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				A2DrainLifecycle lifecycle = context.getBean(A2DrainLifecycle.class);
				Health now = context.getBean(A2HealthIndicator.class).health(true);
				assertThat(now.getStatus()).isEqualTo(Status.UP);
				assertThat(now.getDetails()).containsEntry("lastSweep", "none yet");
				Health later = new A2HealthIndicator(server, lifecycle, Duration.ofHours(1),
						Clock.offset(Clock.systemUTC(), Duration.ofHours(31))).health(true);
				assertThat(later.getStatus()).isEqualTo(Status.DOWN);
				assertThat(later.getDetails()).containsEntry("lastSweep", "none yet")
					.hasEntrySatisfying("sweep", (sweep) -> assertThat((String) sweep)
						.startsWith("no successful sweep since sweeping started at "));
			});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void whilePostgresIsUnreachableTheEndpointAnswersStoreUnavailableAndHealthIsDown(CapturedOutput output) {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=a2").run((context) -> {
			A2Endpoint endpoint = context.getBean(A2Endpoint.class);
			A2HealthIndicator health = context.getBean(A2HealthIndicator.class);
			this.unreachable.set(true);
			// over HTTP and JMX alike, in A2's error shape (§11)
			assertStoreUnavailable(endpoint.overview(null));
			assertStoreUnavailable(endpoint.part("dead-letters", null, null, null, null, null, null));
			int from = output.length();
			Health down = health.health(true);
			assertThat(down.getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.getDetails()).containsKey("lastSweep")
				.hasEntrySatisfying("store", (store) -> assertThat(store).asString().startsWith("unreachable: PostgreSQL cannot be reached"));
			// a probe every few seconds through an outage: not a WARN with a stack trace each time
			assertThat(output.toString().substring(from)).doesNotContain("A2 health check failed");
			this.unreachable.set(false);
			assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
			assertThat(endpoint.overview(null).getStatus()).isEqualTo(200);
		});
	}

	/**
	 * An outage of PostgreSQL is a line when it starts and a line when it ends, as an application logs
	 * at INFO, not a stack trace per sweep; the consumers go on after it.
	 */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void anOutageIsLoggedOnceWhenItStartsAndOnceWhenItEndsAndTheConsumersGoOn(CapturedOutput output) {
		SpringApplication application = new SpringApplication(OutageApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(Map.of("a2.drain.consumers", "echo", "a2.drain.sweep-interval", "50ms"));
		application.addInitializers((context) -> context.getBeanFactory().registerSingleton("dataSource", this.outageDataSource));
		try (ConfigurableApplicationContext context = application.run()) {
			Session session = context.getBean(A2Server.class).session("chat", "outage");
			GoodConsumers consumers = context.getBean(GoodConsumers.class);
			session.append(NewEvent.of("said", new Said("before")));
			await().atMost(Duration.ofSeconds(10)).until(() -> consumers.seen.contains("before"));
			int from = output.length();
			int refused = this.refusals.get();

			this.unreachable.set(true);
			// sweeps go on failing: each asks for a connection
			await().atMost(Duration.ofSeconds(10)).until(() -> this.refusals.get() >= refused + 5);
			this.unreachable.set(false);
			await().atMost(Duration.ofSeconds(10)).until(() -> output.toString().substring(from).contains("reaches PostgreSQL again"));

			session.append(NewEvent.of("said", new Said("after")));
			await().atMost(Duration.ofSeconds(10)).until(() -> consumers.seen.contains("after"));
			String outage = output.toString().substring(from);
			assertThat(outage).containsOnlyOnce("A2's sweep cannot reach PostgreSQL (Connection is not available, request timed out "
					+ "after 30000ms); it goes on trying, and says here when it succeeds")
				.containsPattern("A2's sweep reaches PostgreSQL again, after \\d+ failed tries in \\d+ ms")
				.as("no stack trace")
				.doesNotContain("\tat ");
			Matcher tries = Pattern.compile("after (\\d+) failed tries").matcher(outage);
			assertThat(tries.find()).isTrue();
			assertThat(Integer.parseInt(tries.group(1))).as("failed sweeps, logged once").isGreaterThanOrEqualTo(3);
		}
	}

	@SuppressWarnings("unchecked")
	private static void assertStoreUnavailable(WebEndpointResponse<Object> response) {
		assertThat(response.getStatus()).isEqualTo(503);
		assertThat((Map<String, Object>) ((Map<String, Object>) response.getBody()).get("error"))
			.containsEntry("code", "STORE_UNAVAILABLE")
			.containsKey("message");
	}

	/** A work store whose sweep fails at its first statement, as a statement timeout on a large a2_work would. */
	private static WorkStore failingSweeps(WorkStore store) {
		return (WorkStore) Proxy.newProxyInstance(WorkStore.class.getClassLoader(), new Class<?>[] { WorkStore.class },
				(proxy, method, args) -> {
					if (method.getName().equals("lapseOrphaned")) {
						throw new QueryTimeoutException("canceling statement due to statement timeout");
					}
					try {
						return method.invoke(store, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Test
	void severalContractsCoexist() {
		this.runner.withBean("orders", Contract.class, () -> Contract.builder("orders").event("placed", Said.class).build())
			.run((context) -> assertThat(context.getBean(A2Server.class).contracts()).extracting(Contract::name)
				.containsExactlyInAnyOrder("chat", "orders"));
	}

	@Test
	void annotatedConsumersRunAndTheirReturnedEventsAreAppended() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.sweep-interval=50ms")
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				server.session("chat", "s").append(NewEvent.of("said", new Said("hello")));
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(server.session("chat", "s").history(0, 10).events()).hasSize(2));
				assertThat(context.getBean(GoodConsumers.class).seen).contains("hello");
			});
	}

	@Test
	void sweepRecoversWorkThatAStoppedContextLeft() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.enabled=false")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(A2DrainLifecycle.class);
				context.getBean(A2Server.class).session("chat", "left").append(NewEvent.of("said", new Said("left behind")));
			});
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.sweep-interval=50ms")
			.run((context) -> await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(context.getBean(GoodConsumers.class).seen).contains("left behind")));
	}

	@Test
	void gaugesCountPendingWorkAndDeadLettersPerConsumer() {
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.enabled=false")
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				server.session("chat", "waiting").append(NewEvent.of("said", new Said("one")), NewEvent.of("said", new Said("two")));
				SimpleMeterRegistry registry = new SimpleMeterRegistry();
				context.getBean(A2Metrics.class).bindTo(registry);
				assertThat(registry.get("a2.consumer.pending").tag("consumer", "echo").gauge().value()).isEqualTo(2);
				assertThat(registry.get("a2.consumer.dead.letters").tag("consumer", "echo").gauge().value()).isZero();
				assertThat(registry.get("a2.consumer.oldest.pending.age").tag("consumer", "echo").gauge().value())
					.isGreaterThanOrEqualTo(0);
				assertThat(registry.get("a2.consumer.pending").tag("consumer", "fixed").gauge().value()).isEqualTo(1);
			});
	}

	/**
	 * A consumer removed from the application leaves its dead letters in the store: the overview and
	 * the gauges still count them, so an operator sees what waits for a redrive.
	 */
	@Test
	void theDeadLettersOfAConsumerTheApplicationNoLongerRegistersAreInTheOverviewAndTheGauges() {
		this.runner.withUserConfiguration(FailingWithError.class)
			.withPropertyValues("a2.drain.max-failures=1")
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				server.session("chat", "before-the-removal").append(NewEvent.of("said", new Said("check")));
				await().atMost(Duration.ofSeconds(20))
					.until(() -> server.deadLetters("chat", null, "erring", 10).size() == 1);
			});
		this.runner.withUserConfiguration(GoodConsumers.class)
			.withPropertyValues("a2.drain.enabled=false", "management.endpoints.web.exposure.include=a2")
			.run((context) -> {
				Overview overview = (Overview) context.getBean(A2Endpoint.class).overview(null).getBody();
				assertThat(overview.consumers()).filteredOn((consumer) -> consumer.name().equals("erring"))
					.singleElement()
					.satisfies((erring) -> {
						assertThat(erring.registered()).isFalse();
						assertThat(erring.deadLetters()).isEqualTo(1);
						assertThat(erring.lane()).isNull();
					});
				assertThat(overview.consumers()).filteredOn(ConsumerView::registered)
					.extracting(ConsumerView::name)
					.containsExactlyInAnyOrder("echo", "fixed");
				SimpleMeterRegistry registry = new SimpleMeterRegistry();
				context.getBean(A2Metrics.class).bindTo(registry);
				assertThat(registry.get("a2.consumer.dead.letters").tag("consumer", "erring").gauge().value()).isEqualTo(1);
				assertThat(registry.get("a2.consumer.dead.letters").tag("consumer", "echo").gauge().value()).isZero();
			});
	}

	@Test
	void drainPropertiesBindWithTheirDefaults() {
		this.runner.run((context) -> {
			A2Properties.Drain drain = context.getBean(A2Properties.class).getDrain();
			assertThat(drain.isEnabled()).isTrue();
			assertThat(drain.toSettings()).isEqualTo(DrainSettings.DEFAULTS);
			assertThat(drain.getSweepInterval()).isEqualTo(Duration.ofSeconds(1));
			assertThat(drain.getStopGrace()).isEqualTo(Duration.ofSeconds(10));
		});
		this.runner.withPropertyValues("a2.drain.lease=9s", "a2.drain.concurrency=3", "a2.drain.max-failures=4",
				"a2.drain.retry-base=10ms", "a2.drain.retry-max=1s").run((context) -> {
					DrainSettings settings = context.getBean(A2Properties.class).getDrain().toSettings();
					assertThat(settings.lease()).isEqualTo(Duration.ofSeconds(9));
					assertThat(settings.heartbeat()).isEqualTo(Duration.ofSeconds(3));
					assertThat(settings.concurrency()).isEqualTo(3);
					assertThat(settings.maxFailures()).isEqualTo(4);
					assertThat(settings.retryDelay(3)).isEqualTo(Duration.ofMillis(40));
				});
	}

	@Test
	void actuatorPartsAppearWithTheActuatorAndBackOffWithoutIt() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=a2").run((context) -> {
			assertThat(context).hasSingleBean(A2Endpoint.class);
			assertThat(context).hasBean("a2HealthIndicator");
		});
		this.runner.withClassLoader(new FilteredClassLoader(Endpoint.class, HealthIndicator.class)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(A2Endpoint.class);
			assertThat(context).doesNotHaveBean("a2HealthIndicator");
		});
		this.runner.withPropertyValues("management.health.a2.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean("a2HealthIndicator"));
		this.runner.withBean(A2Endpoint.class, () -> new A2Endpoint(null, A2Authorizer.permitAll()) {
		}).run((context) -> assertThat(context).hasSingleBean(A2Endpoint.class));
	}

	@Test
	void unknownContractFailsStartUpNamingBeanMethodAndFix() {
		assertStartUpFails(UnknownContract.class,
				"@A2Consumer method UnknownContract.handle of bean", "contract 'orders' is not a bean; define a Contract bean of that name");
	}

	@Test
	void unknownTypeFailsStartUp() {
		assertStartUpFails(UnknownType.class, "UnknownType.handle", "consumer 'c' takes type 'nope', which contract 'chat' does not declare");
	}

	@Test
	void duplicateNameFailsStartUp() {
		assertStartUpFails(Duplicate.class, "Duplicate.again of bean", "Duplicate.handle of bean",
				"both declare consumer 'same' of contract 'chat'; give each a name of its own");
	}

	@Test
	void backfillWithoutAFixedLaneFailsStartUp() {
		assertStartUpFails(BackfillWithoutLane.class, "BackfillWithoutLane.handle",
				"consumer 'c' backfills, so its lane must be a fixed string");
	}

	@Test
	void aSignatureItCannotCallFailsStartUp() {
		assertStartUpFails(BadParameter.class, "BadParameter.handle",
				"parameter 'number' of type Integer is neither a ConsumerContext, an Event, nor the payload of every type it takes");
		assertStartUpFails(BadReturn.class, "BadReturn.handle", "it returns String; return void, a NewEvent");
		assertStartUpFails(BothLanes.class, "BothLanes.handle", "it sets both lane (a fixed lane) and laneKey");
		assertStartUpFails(BatchWithoutLane.class, "BatchWithoutLane.handle", "it takes a List", "needs a fixed lane");
	}

	@Test
	void aMethodTakingAListProjectsACursorsEventsInBatches() {
		this.runner.withUserConfiguration(BatchProjection.class).run((context) -> {
			A2Server server = context.getBean(A2Server.class);
			Session session = server.session("chat", "batched");
			session.append(NewEvent.of("said", new Said("a")), NewEvent.of("said", new Said("b")),
					NewEvent.of("said", new Said("c")));
			// at least through the three appended; a drain that ran first may have passed the returned event too
			assertThat(session.consume("projector")).isGreaterThanOrEqualTo(3);
			assertThat(context.getBean(BatchProjection.class).batches).containsExactly(List.of("a", "b", "c"));
			assertThat(session.history(0, 10).events()).extracting(Event::type).containsExactly("said", "said", "said", "echoed");
		});
	}

	@Test
	void abortWhenKeepsFromStartingOnlyTheRunItsConditionNames() {
		this.runner.withUserConfiguration(StoppableAnswers.class)
			.withBean("support", Contract.class, () -> Contract.builder("support")
				.event("asked", Said.class)
				.event("stop", Stop.class)
				.event("answered", Said.class)
				.build())
			.run((context) -> {
				Session session = context.getBean(A2Server.class).session("support", "help");
				// one append: when q1 is claimed, the stop naming it is in the log already
				session.append(NewEvent.of("asked", new Said("q1"), "q1"), NewEvent.of("asked", new Said("q2"), "q2"),
						NewEvent.of("stop", new Stop("q1")));
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(session.history(0, 10).events()).extracting(Event::type)
						.containsExactly("asked", "asked", "stop", "answered"));
				assertThat(context.getBean(StoppableAnswers.class).seen).containsExactly("q2");
			});
	}

	/**
	 * §6.4: a failed attempt records the error text; a method that throws an {@code Error} (an
	 * assertion, a stack overflow) is a failure like any other, and its dead letter says what it threw.
	 */
	@Test
	void aMethodThatThrowsAnErrorIsDeadLetteredWithWhatItThrew() {
		this.runner.withUserConfiguration(FailingWithError.class)
			.withPropertyValues("a2.drain.max-failures=1")
			.run((context) -> {
				A2Server server = context.getBean(A2Server.class);
				server.session("chat", "erring").append(NewEvent.of("said", new Said("check")));
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(server.deadLetters("chat", "erring", "erring", 10)).singleElement()
						.satisfies((dead) -> assertThat(dead.lastError())
							.isEqualTo("AssertionError: the ledger is off by one after 'check'")));
			});
	}

	static class FailingWithError {

		@A2Consumer(contract = "chat", name = "erring", types = "said")
		void check(Said said) {
			throw new AssertionError("the ledger is off by one after '" + said.text() + "'");
		}

	}

	@Test
	void aBadAbortConditionFailsStartUp() {
		assertStartUpFails(BadAbortWhen.class, "BadAbortWhen.handle", "abortWhen '#event.payload.reply ==' is not a valid SpEL");
		assertStartUpFails(AbortWhenWithoutAbortOn.class, "AbortWhenWithoutAbortOn.handle", "it sets abortWhen without abortOn");
	}

	static class StoppableAnswers {

		final List<String> seen = new CopyOnWriteArrayList<>();

		@A2Consumer(contract = "support", name = "answers", types = "asked", laneKey = "#session", abortOn = "stop",
				abortWhen = "#event.payload.reply == #trigger.id")
		NewEvent answer(Said question) {
			this.seen.add(question.text());
			return NewEvent.of("answered", new Said("answer to " + question.text()));
		}

	}

	static class BadAbortWhen {

		@A2Consumer(contract = "chat", name = "c", abortOn = "echoed", abortWhen = "#event.payload.reply ==")
		void handle(Said said) {
		}

	}

	static class AbortWhenWithoutAbortOn {

		@A2Consumer(contract = "chat", name = "c", abortWhen = "true")
		void handle(Said said) {
		}

	}

	static class BatchProjection {

		final List<List<String>> batches = new CopyOnWriteArrayList<>();

		@A2Consumer(contract = "chat", name = "projector", types = "said", lane = "projection")
		NewEvent handle(List<Said> batch) {
			this.batches.add(batch.stream().map(Said::text).toList());
			return NewEvent.of("echoed", new Said(batch.size() + " projected"));
		}

	}

	static class BatchWithoutLane {

		@A2Consumer(contract = "chat", name = "c")
		void handle(List<Said> batch) {
		}

	}

	private void assertStartUpFails(Class<?> consumers, String... messages) {
		this.runner.withUserConfiguration(consumers).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure.getCause() != null && !(failure instanceof IllegalStateException || failure instanceof IllegalArgumentException)) {
				failure = failure.getCause();
			}
			for (String message : messages) {
				assertThat(failure).hasMessageContaining(message);
			}
		});
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ A2AutoConfiguration.class, JacksonAutoConfiguration.class })
	@Import({ ChatContract.class, GoodConsumers.class })
	static class OutageApplication {

	}

	@Configuration(proxyBeanMethods = false)
	static class ChatContract {

		@Bean
		Contract chat() {
			return Contract.builder("chat").event("said", Said.class).event("echoed", Said.class).build();
		}

	}

	static class GoodConsumers {

		final List<String> seen = new CopyOnWriteArrayList<>();

		@A2Consumer(contract = "chat", name = "echo", types = "said")
		NewEvent echo(Said said, ConsumerContext context) {
			this.seen.add(said.text());
			return NewEvent.of("echoed", new Said("echo: " + said.text()));
		}

		@A2Consumer(contract = "chat", name = "fixed", lane = "projection", backfill = true)
		void project(ConsumerContext context) {
		}

	}

	static class UnknownContract {

		@A2Consumer(contract = "orders", name = "c")
		void handle(ConsumerContext context) {
		}

	}

	static class UnknownType {

		@A2Consumer(contract = "chat", name = "c", types = "nope")
		void handle(ConsumerContext context) {
		}

	}

	static class Duplicate {

		@A2Consumer(contract = "chat", name = "same")
		void handle(ConsumerContext context) {
		}

		@A2Consumer(contract = "chat", name = "same")
		void again(ConsumerContext context) {
		}

	}

	static class BackfillWithoutLane {

		@A2Consumer(contract = "chat", name = "c", backfill = true)
		void handle(ConsumerContext context) {
		}

	}

	static class BadParameter {

		@A2Consumer(contract = "chat", name = "c")
		void handle(Integer number) {
		}

	}

	static class BadReturn {

		@A2Consumer(contract = "chat", name = "c")
		String handle(Said said) {
			return "";
		}

	}

	static class BothLanes {

		@A2Consumer(contract = "chat", name = "c", lane = "p", laneKey = "#session")
		void handle(Said said) {
		}

	}

}
