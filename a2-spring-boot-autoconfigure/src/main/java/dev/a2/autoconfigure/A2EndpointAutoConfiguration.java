package dev.a2.autoconfigure;

import dev.a2.A2Server;
import dev.a2.web.A2Authorizer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.server.WebExceptionHandler;

/**
 * The {@code a2} actuator endpoint, when the actuator is present and the endpoint is exposed.
 * Like every actuator endpoint, it is not exposed over HTTP unless the application says so; its
 * operator console is served only with {@code a2.console.enabled}. Its operations ask the same
 * {@link A2Authorizer} as A2's web endpoints, for {@code OPERATE}; it needs {@code a2-webflux}, which
 * the starter brings.
 */
@AutoConfiguration(after = { A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class })
@EnableConfigurationProperties(A2Properties.class)
@ConditionalOnClass({ Endpoint.class, A2Authorizer.class })
@ConditionalOnAvailableEndpoint(A2Endpoint.class)
public final class A2EndpointAutoConfiguration {

	@Bean
	@ConditionalOnBean({ A2Server.class, A2Authorizer.class })
	@ConditionalOnMissingBean
	A2Endpoint a2Endpoint(A2Server server, A2Authorizer authorizer, A2Properties properties) {
		return new A2Endpoint(server, authorizer, properties.getConsole().isEnabled());
	}

	@Bean
	@ConditionalOnBean(A2Endpoint.class)
	@ConditionalOnMissingBean
	A2EndpointJmxExtension a2EndpointJmxExtension(A2Endpoint endpoint) {
		return new A2EndpointJmxExtension(endpoint);
	}

	/** A redrive with a field it does not have is refused, naming it, not applied without it. */
	@Bean
	A2EndpointFields a2EndpointFields() {
		return new A2EndpointFields();
	}

	/** A redrive's body Boot's WebFlux endpoint machinery cannot read, answered in A2's shape. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(WebExceptionHandler.class)
	static final class ReactiveBodyErrors {

		@Bean
		A2EndpointBodyErrors.Reactive a2EndpointBodyErrors(ObjectProvider<PathMappedEndpoints> endpoints) {
			return new A2EndpointBodyErrors.Reactive(endpoints);
		}

	}

	/** A redrive's body Boot's Spring MVC endpoint machinery cannot read, answered in A2's shape. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
	static final class ServletBodyErrors {

		@Bean
		A2EndpointBodyErrors.Servlet a2EndpointBodyErrors(ObjectProvider<PathMappedEndpoints> endpoints) {
			return new A2EndpointBodyErrors.Servlet(endpoints);
		}

	}

}
