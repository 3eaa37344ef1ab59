package dev.a2.autoconfigure;

import dev.a2.A2Server;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * A2's gauges, bound to whatever meter registry the application has.
 */
@AutoConfiguration(after = A2AutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
public final class A2MetricsAutoConfiguration {

	@Bean
	@ConditionalOnBean(A2Server.class)
	@ConditionalOnMissingBean
	A2Metrics a2Metrics(A2Server server) {
		return new A2Metrics(server);
	}

}
