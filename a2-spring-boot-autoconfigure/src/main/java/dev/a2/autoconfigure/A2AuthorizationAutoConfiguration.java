package dev.a2.autoconfigure;

import dev.a2.A2Server;
import dev.a2.web.A2Authorizer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;

/**
 * The {@link A2Authorizer} that A2's endpoints and its actuator endpoint ask, unless the application
 * defines its own: with Spring Security, authenticated callers (operators by
 * {@code a2.security.operator-authority}); without it, everyone, said once at start-up.
 */
@AutoConfiguration(after = A2AutoConfiguration.class)
@EnableConfigurationProperties(A2Properties.class)
@ConditionalOnClass({ A2Server.class, A2Authorizer.class })
@ConditionalOnBean(A2Server.class)
public final class A2AuthorizationAutoConfiguration {

	private static final Log logger = LogFactory.getLog(A2AuthorizationAutoConfiguration.class);

	/** Spring Security's web filter chains (WebFlux's, in the jar both stacks use). */
	static final String SECURITY = "org.springframework.security.web.server.SecurityWebFilterChain";

	/** With Spring Security: only authenticated callers, and operators by their authority. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = SECURITY)
	static final class SecuredAuthorization {

		@Bean
		@ConditionalOnMissingBean
		A2Authorizer a2Authorizer(A2Properties properties) {
			return A2Authorizer.authenticated(properties.getSecurity().getOperatorAuthority());
		}

	}

	/** Without Spring Security: everyone, said once at start-up by the first endpoint that asks. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass(SECURITY)
	static final class OpenAuthorization {

		@Bean
		@Lazy
		@ConditionalOnMissingBean
		A2Authorizer a2Authorizer(A2Properties properties, ListableBeanFactory beans) {
			// name only what is served: without the routes (a2.web.enabled=false), the actuator endpoint alone
			String open = beans.containsBean("a2RouterFunction")
					? "A2's endpoints under " + properties.getWeb().getBasePath()
							+ " and its actuator endpoint are open to every caller that reaches them"
					: "A2's actuator endpoint is open to every caller that reaches it";
			logger.warn(open + ": define an A2Authorizer bean (or add Spring Security) to decide who "
					+ "may read, push, write presence, clear and operate");
			return A2Authorizer.permitAll();
		}

	}

}
