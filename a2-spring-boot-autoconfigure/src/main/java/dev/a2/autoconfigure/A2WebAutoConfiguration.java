package dev.a2.autoconfigure;

import java.util.List;

import dev.a2.A2Server;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionFeeds;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Endpoints;
import dev.a2.web.A2Routes;
import dev.a2.web.A2Servlet;
import dev.a2.web.A2ServletGate;
import dev.a2.web.A2SocketHandler;
import dev.a2.web.A2UnreadBodyFilter;
import dev.a2.web.A2WebExceptionHandler;
import dev.a2.web.A2WebSettings;
import dev.a2.web.LiveConnections;
import dev.a2.web.PresenceParticipant;
import dev.a2.wire.Wire;
import dev.a2.wire.WireLimits;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.util.StringUtils;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;

/**
 * A2's endpoints (§10, the {@code a2-webflux} library): the routes under {@code a2.web.base-path}, the
 * SSE streams and the socket, fed from the store on a bounded scheduler of their own. A WebFlux
 * application serves them with its own routes; a servlet (Spring MVC) application, which serves no
 * WebFlux routes, as a servlet of their own at the base path. Each bean backs off to the application's.
 */
@AutoConfiguration(after = { A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class })
@ConditionalOnWebApplication
@ConditionalOnClass({ RouterFunction.class, A2Server.class, A2Routes.class })
@ConditionalOnBean(A2Server.class)
@ConditionalOnBooleanProperty(name = "a2.web.enabled", matchIfMissing = true)
public final class A2WebAutoConfiguration {

	private static final Log logger = LogFactory.getLog(A2WebAutoConfiguration.class);

	/** Store calls of the endpoints: bounded threads and a bounded queue, never an event loop. */
	@Bean(destroyMethod = "dispose")
	@ConditionalOnMissingBean(name = "a2StoreScheduler")
	Scheduler a2StoreScheduler(A2Properties properties) {
		return Schedulers.newBoundedElastic(properties.getWeb().getStoreThreads(), 100_000, "a2-store");
	}

	@Bean
	@ConditionalOnMissingBean
	Wire a2Wire(ObjectProvider<JsonMapper> jsonMapper, A2Properties properties) {
		A2Properties.Web web = properties.getWeb();
		return new Wire(jsonMapper.getIfUnique(() -> JsonMapper.builder().build()),
				new WireLimits((int) web.getMaxPushBytes().toBytes(), web.getMaxJsonDepth(), web.getMaxStringLength(),
						web.getMaxEventsPerPush()));
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	SessionFeeds a2SessionFeeds(A2Server server, Scheduler a2StoreScheduler, A2Properties properties) {
		return new SessionFeeds(server.eventStore(), server.changes(), a2StoreScheduler, properties.getWeb().getPoll());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	PresenceFeeds a2PresenceFeeds(A2Server server, Scheduler a2StoreScheduler, A2Properties properties) {
		return new PresenceFeeds(server.changes(), (contract, session) -> server.session(contract, session).presence(),
				a2StoreScheduler, properties.getWeb().getPoll(), server.clock());
	}

	@Bean
	@ConditionalOnMissingBean
	LiveConnections a2LiveConnections() {
		return new LiveConnections();
	}

	@Bean
	@ConditionalOnMissingBean
	A2Routes a2Routes(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, A2Authorizer authorizer,
			Scheduler a2StoreScheduler, A2Properties properties, ObjectProvider<ObservationRegistry> observations,
			LiveConnections connections) {
		return new A2Routes(server, wire, feeds, presence, authorizer, a2StoreScheduler, settings(properties),
				observations.getIfUnique(() -> ObservationRegistry.NOOP), connections);
	}

	@Bean
	@ConditionalOnMissingBean(name = "a2RouterFunction")
	RouterFunction<ServerResponse> a2RouterFunction(A2Routes routes) {
		return routes.routes();
	}

	@Bean
	@ConditionalOnMissingBean
	A2SocketHandler a2SocketHandler(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence,
			A2Authorizer authorizer, Scheduler a2StoreScheduler, A2Properties properties,
			ObjectProvider<ObservationRegistry> observations, LiveConnections connections) {
		return new A2SocketHandler(server, wire, feeds, presence, authorizer, a2StoreScheduler, settings(properties),
				observations.getIfUnique(() -> ObservationRegistry.NOOP), connections);
	}

	@Bean
	@ConditionalOnMissingBean(name = "a2SocketMapping")
	SimpleUrlHandlerMapping a2SocketMapping(A2SocketHandler handler, A2Properties properties) {
		return A2Endpoints.socketMapping(handler, settings(properties), properties.getWeb().getMaxPushBytes().toBytes());
	}

	@Bean
	@Order(A2WebExceptionHandler.ORDER)
	@ConditionalOnMissingBean
	A2WebExceptionHandler a2WebExceptionHandler(ObjectProvider<JsonMapper> jsonMapper, A2Properties properties) {
		return new A2WebExceptionHandler(jsonMapper.getIfUnique(() -> JsonMapper.builder().build()),
				settings(properties).basePath());
	}

	/**
	 * A WebFlux application: a push that a filter before A2 refuses unread (Spring Security's CSRF
	 * check) has its body read before the refusal is written, or Reactor Netty leaves the keep-alive
	 * connection deaf to the page's next request (see {@link A2UnreadBodyFilter}).
	 */
	@Bean
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnMissingBean
	A2UnreadBodyFilter a2UnreadBodyFilter(A2Properties properties) {
		return new A2UnreadBodyFilter(properties.getWeb().getBasePath(), properties.getWeb().getMaxPushBytes().toBytes());
	}

	private static A2WebSettings settings(A2Properties properties) {
		A2Properties.Web web = properties.getWeb();
		try {
			return new A2WebSettings(web.getBasePath(), web.getPing(), web.getMaxSubscriptionsPerSocket(),
					web.getAllowedOrigins(), (web.getPresenceParticipant() == A2Properties.PresenceParticipant.ANY)
							? PresenceParticipant.ANY : PresenceParticipant.CALLER,
					web.getReauthorizeEvery());
		}
		catch (IllegalArgumentException ex) {
			// the other values were checked as the properties bound; what is left is an origin the settings refuse
			boolean split = web.getAllowedOrigins().stream().anyMatch((origin) -> origin.contains("[") != origin.contains("]"));
			throw new A2PropertiesException(List.of("a2.web.allowed-origins: " + ex.getMessage() + (split
					? " (a property's value is split at its commas, a port list's too: name that origin alone, "
							+ "as a2.web.allowed-origins[0]=http://localhost:[8080,8081])"
					: "")));
		}
	}

	/**
	 * A servlet application: the routes and the socket as a servlet at {@code {base-path}/*}, before
	 * Spring MVC's dispatcher at {@code /}, so a path under the base path is A2's. A base path of
	 * {@code /} would take every request of the application: nothing is mounted there, and a WARN says so.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ ServletRegistrationBean.class, A2Servlet.class })
	static final class ServletRoutes {

		@Bean
		@ConditionalOnMissingBean(name = "a2Servlet")
		ServletRegistrationBean<A2Servlet> a2Servlet(A2Routes a2Routes, SimpleUrlHandlerMapping a2SocketMapping,
				A2WebExceptionHandler a2WebExceptionHandler, A2Properties properties,
				ObjectProvider<ObservationRegistry> observations) {
			String basePath = StringUtils.trimTrailingCharacter(properties.getWeb().getBasePath(), '/');
			ServletRegistrationBean<A2Servlet> servlet = new ServletRegistrationBean<>(new A2Servlet(a2Routes,
					a2SocketMapping, a2WebExceptionHandler, observations.getIfUnique(() -> ObservationRegistry.NOOP)),
					basePath + "/*");
			servlet.setName("a2Servlet");
			servlet.setAsyncSupported(true);
			if (basePath.isEmpty()) {
				logger.warn("A2's endpoints are not served: in a servlet (Spring MVC) application they are a servlet "
						+ "at a2.web.base-path, and a base path of \"/\" would take every request of the application. "
						+ "Set a2.web.base-path to a path of their own, such as /a2");
				servlet.setEnabled(false);
			}
			return servlet;
		}

		/**
		 * First of the filters at the base path: A2's servlet answers on threads of its own, and a filter
		 * that writes headers once the chain returns (Spring Security's) must not write them as A2 commits
		 * the response ({@link A2ServletGate}).
		 */
		@Bean
		@ConditionalOnMissingBean(name = "a2ServletGate")
		FilterRegistrationBean<A2ServletGate> a2ServletGate(A2Properties properties) {
			String basePath = StringUtils.trimTrailingCharacter(properties.getWeb().getBasePath(), '/');
			FilterRegistrationBean<A2ServletGate> gate = new FilterRegistrationBean<>(new A2ServletGate());
			gate.addUrlPatterns(basePath + "/*");
			gate.setName("a2ServletGate");
			gate.setAsyncSupported(true);
			gate.setOrder(Ordered.HIGHEST_PRECEDENCE);
			gate.setEnabled(!basePath.isEmpty());
			return gate;
		}

	}

	/** Gauges of the live connections, when Micrometer is present. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
	static final class LiveMetrics {

		@Bean
		@ConditionalOnMissingBean(name = "a2WebMetrics")
		io.micrometer.core.instrument.binder.MeterBinder a2WebMetrics(LiveConnections connections, SessionFeeds feeds) {
			// one description for both: Prometheus keeps a name's first, and the socket's was read as the streams'
			String connectionsDescription = "Open connections to A2 on this instance, by transport: SSE streams or WebSockets";
			return (registry) -> {
				io.micrometer.core.instrument.Gauge.builder("a2.web.connections", connections, LiveConnections::streams)
					.description(connectionsDescription)
					.tag("transport", "sse")
					.register(registry);
				io.micrometer.core.instrument.Gauge.builder("a2.web.connections", connections, LiveConnections::sockets)
					.description(connectionsDescription)
					.tag("transport", "socket")
					.register(registry);
				io.micrometer.core.instrument.Gauge.builder("a2.web.stream.buffered", feeds, SessionFeeds::bufferedEvents)
					.description("Events read for subscribers that their connections have not taken yet")
					.register(registry);
			};
		}

	}

}
