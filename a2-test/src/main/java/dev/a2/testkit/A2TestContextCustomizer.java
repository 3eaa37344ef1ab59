package dev.a2.testkit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.live.SessionChanges;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Puts the kit into an {@link A2Test}'s context: the data source on a fresh schema (A2 migrates it),
 * the virtual clock (A2's auto-configuration uses a {@code Clock} bean), the kit's run interceptor,
 * this instance's session changes only (no LISTEN connection), manual drain scheduling, and the
 * consumers to run. One per test class, so each class has its own schema.
 */
final class A2TestContextCustomizer implements ContextCustomizer {

	private final Class<?> testClass;

	private final List<String> consumers;

	A2TestContextCustomizer(Class<?> testClass, List<String> consumers) {
		this.testClass = testClass;
		this.consumers = consumers;
	}

	@Override
	public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
		HikariDataSource pool = TestDatabase.newSchemaDataSource(this.testClass.getSimpleName(), 10);
		FaultyDataSource dataSource = new FaultyDataSource(pool);
		VirtualClock clock = new VirtualClock();
		A2TestKit kit = new A2TestKit(clock, dataSource, () -> context.getBean(A2Server.class));
		Map<String, Object> properties = new LinkedHashMap<>();
		// set, so that an application's "embedded database unless a URL is set" steps aside
		properties.put("spring.datasource.url", pool.getJdbcUrl());
		properties.put("spring.datasource.username", pool.getUsername());
		properties.put("spring.datasource.password", pool.getPassword());
		properties.put("a2.drain.scheduling", "manual");
		if (!this.consumers.isEmpty()) {
			properties.put("a2.drain.consumers", String.join(",", this.consumers));
		}
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("a2Test", properties));
		DefaultListableBeanFactory beans = (DefaultListableBeanFactory) context.getBeanFactory();
		// primary, so that they win over a data source or clock the application declares itself: with two
		// candidates and no primary, A2's auto-configuration fails for the data source and takes neither
		// clock (A2 then runs on the wall clock). The data source closes with the context (AutoCloseable).
		beans.registerBeanDefinition("a2TestDataSource", primary(FaultyDataSource.class, dataSource));
		beans.registerBeanDefinition("a2TestClock", primary(VirtualClock.class, clock));
		beans.registerSingleton("a2TestRunInterceptor", kit.interceptor());
		beans.registerSingleton("a2TestSessionChanges", SessionChanges.local());
		beans.registerSingleton("a2TestKit", kit);
	}

	private static <T> RootBeanDefinition primary(Class<T> type, T instance) {
		RootBeanDefinition definition = new RootBeanDefinition(type, () -> instance);
		definition.setPrimary(true);
		return definition;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof A2TestContextCustomizer that && this.testClass == that.testClass
				&& this.consumers.equals(that.consumers);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.testClass, this.consumers);
	}

}
