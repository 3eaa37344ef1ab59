package dev.a2.autoconfigure;

import dev.a2.A2Server;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code a2} health contributor: the store's reachability and the sweep's last successful round.
 */
@AutoConfiguration(after = A2AutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("a2")
public final class A2HealthContributorAutoConfiguration {

	@Bean(name = "a2HealthIndicator")
	@ConditionalOnBean(A2Server.class)
	@ConditionalOnMissingBean(name = "a2HealthIndicator")
	A2HealthIndicator a2HealthIndicator(A2Server server, ObjectProvider<A2DrainLifecycle> drain, A2Properties properties) {
		return new A2HealthIndicator(server, drain.getIfAvailable(), properties.getDrain().getSweepInterval());
	}

}
