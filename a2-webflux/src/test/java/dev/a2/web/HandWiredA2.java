package dev.a2.web;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.BeanValidationPayloadValidator;
import dev.a2.Contract;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionFeeds;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.store.postgres.PostgresSessionChanges;
import dev.a2.wire.Wire;
import dev.a2.wire.WireLimits;
import io.micrometer.observation.ObservationRegistry;
import jakarta.validation.Validator;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;

/**
 * A2 and its endpoints wired by hand, one plain bean each, as an application without A2's
 * auto-configuration does it: the library's public constructors, settings read from the same
 * {@code a2.*} property names the starter uses (so the tests can set them), defaults as documented.
 */
@Configuration(proxyBeanMethods = false)
class HandWiredA2 {

	@Bean(destroyMethod = "close")
	PostgresSessionChanges a2SessionChanges(DataSource dataSource) {
		PostgresSchema.migrate(dataSource);
		return new PostgresSessionChanges(dataSource);
	}

	@Bean
	A2Server a2Server(DataSource dataSource, PostgresSessionChanges changes, ObjectProvider<Contract> contracts,
			ObjectProvider<Validator> validator, ObjectProvider<ObservationRegistry> observations, Environment env) {
		A2Server.Builder builder = A2Server.builder()
			.dataSource(dataSource)
			.sessionChanges(changes)
			.presenceTtl(env.getProperty("a2.presence.ttl", Duration.class, Duration.ofSeconds(60)));
		validator.ifUnique((v) -> builder.payloadValidator(new BeanValidationPayloadValidator(v)));
		observations.ifUnique(builder::observationRegistry);
		contracts.orderedStream().forEach(builder::contract);
		return builder.build();
	}

	@Bean(destroyMethod = "dispose")
	Scheduler a2StoreScheduler() {
		return Schedulers.newBoundedElastic(32, 100_000, "a2-store");
	}

	@Bean
	Wire a2Wire(ObjectProvider<JsonMapper> mapper, Environment env) {
		WireLimits defaults = WireLimits.DEFAULTS;
		return new Wire(mapper.getIfUnique(() -> JsonMapper.builder().build()), new WireLimits(
				(int) env.getProperty("a2.web.max-push-bytes", DataSize.class, DataSize.ofBytes(defaults.maxBytes())).toBytes(),
				defaults.maxDepth(), env.getProperty("a2.web.max-string-length", Integer.class, defaults.maxStringLength()),
				env.getProperty("a2.web.max-events-per-push", Integer.class, defaults.maxEvents())));
	}

	@Bean(destroyMethod = "close")
	SessionFeeds a2SessionFeeds(A2Server server, Scheduler a2StoreScheduler, Environment env) {
		return new SessionFeeds(server.eventStore(), server.changes(), a2StoreScheduler, poll(env));
	}

	@Bean(destroyMethod = "close")
	PresenceFeeds a2PresenceFeeds(A2Server server, Scheduler a2StoreScheduler, Environment env) {
		return new PresenceFeeds(server.changes(), (contract, session) -> server.session(contract, session).presence(),
				a2StoreScheduler, poll(env), server.clock());
	}

	@Bean
	LiveConnections a2LiveConnections() {
		return new LiveConnections();
	}

	@Bean
	RouterFunction<ServerResponse> a2RouterFunction(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence,
			ObjectProvider<A2Authorizer> authorizer, Scheduler a2StoreScheduler, ObjectProvider<ObservationRegistry> observations,
			LiveConnections connections, Environment env) {
		return new A2Routes(server, wire, feeds, presence, authorizer.getIfUnique(A2Authorizer::permitAll), a2StoreScheduler,
				settings(env), observations.getIfUnique(() -> ObservationRegistry.NOOP), connections)
			.routes();
	}

	@Bean
	SimpleUrlHandlerMapping a2SocketMapping(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence,
			ObjectProvider<A2Authorizer> authorizer, Scheduler a2StoreScheduler, ObjectProvider<ObservationRegistry> observations,
			LiveConnections connections, Environment env) {
		A2SocketHandler handler = new A2SocketHandler(server, wire, feeds, presence,
				authorizer.getIfUnique(A2Authorizer::permitAll), a2StoreScheduler, settings(env),
				observations.getIfUnique(() -> ObservationRegistry.NOOP), connections);
		return A2Endpoints.socketMapping(handler, settings(env), wire.limits().maxBytes());
	}

	@Bean
	A2WebExceptionHandler a2WebExceptionHandler(ObjectProvider<JsonMapper> mapper, Environment env) {
		return new A2WebExceptionHandler(mapper.getIfUnique(() -> JsonMapper.builder().build()), settings(env).basePath());
	}

	@Bean
	A2ExceptionHandling a2ExceptionHandling() {
		return new A2ExceptionHandling();
	}

	private static Duration poll(Environment env) {
		return env.getProperty("a2.web.poll", Duration.class, Duration.ofSeconds(1));
	}

	private static A2WebSettings settings(Environment env) {
		return new A2WebSettings(env.getProperty("a2.web.base-path", "/a2"),
				env.getProperty("a2.web.ping", Duration.class, Duration.ofSeconds(15)),
				env.getProperty("a2.web.max-subscriptions-per-socket", Integer.class, 100),
				List.of(env.getProperty("a2.web.allowed-origins", String[].class, new String[0])),
				env.getProperty("a2.web.presence-participant", PresenceParticipant.class, PresenceParticipant.CALLER),
				env.getProperty("a2.web.reauthorize-every", Duration.class, A2WebSettings.REAUTHORIZE_EVERY));
	}

}
