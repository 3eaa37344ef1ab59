package dev.a2.autoconfigure;

import dev.a2.A2Exception;
import dev.a2.web.A2ExceptionHandling;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ProblemDetail;

/**
 * An {@link A2Exception} thrown from the application's own controllers (MVC or WebFlux) answers its
 * status with a problem body. The application's own advice, ordered before, wins.
 */
@AutoConfiguration
@ConditionalOnWebApplication
@ConditionalOnClass({ ProblemDetail.class, A2Exception.class, A2ExceptionHandling.class })
public final class A2ExceptionHandlingAutoConfiguration {

	@Bean
	@Order(Ordered.LOWEST_PRECEDENCE)
	@ConditionalOnMissingBean
	A2ExceptionHandling a2ExceptionHandling() {
		return new A2ExceptionHandling();
	}

}
