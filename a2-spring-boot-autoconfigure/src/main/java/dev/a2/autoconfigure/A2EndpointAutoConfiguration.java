package dev.a2.autoconfigure;

import dev.a2.A2Server;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@code a2} actuator endpoint, when the actuator is present and the endpoint is exposed.
 * Like every actuator endpoint, it is not exposed over HTTP unless the application says so; its
 * operator console is served only with {@code a2.console.enabled}.
 */
@AutoConfiguration(after = A2AutoConfiguration.class)
@EnableConfigurationProperties(A2Properties.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnAvailableEndpoint(A2Endpoint.class)
public final class A2EndpointAutoConfiguration {

	@Bean
	@ConditionalOnBean(A2Server.class)
	@ConditionalOnMissingBean
	A2Endpoint a2Endpoint(A2Server server, A2Properties properties) {
		return new A2Endpoint(server, properties.getConsole().isEnabled());
	}

}
