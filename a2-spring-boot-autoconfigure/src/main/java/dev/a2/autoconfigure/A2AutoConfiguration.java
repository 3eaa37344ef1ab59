package dev.a2.autoconfigure;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.BeanValidationPayloadValidator;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.DrainScheduling;
import dev.a2.PayloadValidator;
import dev.a2.RunInterceptor;
import dev.a2.live.SessionChanges;
import dev.a2.store.EventStore;
import dev.a2.store.PresenceStore;
import dev.a2.store.SnapshotStore;
import dev.a2.store.WorkStore;
import dev.a2.store.postgres.PostgresEventStore;
import dev.a2.store.postgres.PostgresPresenceStore;
import dev.a2.store.postgres.PostgresSessionChanges;
import dev.a2.store.postgres.PostgresSnapshotStore;
import dev.a2.store.postgres.PostgresWorkStore;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * A2 on the application's {@link DataSource}: schema migrations, the PostgreSQL stores and the
 * {@link A2Server} of every {@link Contract} bean. Each bean backs off to one the application
 * defines. The stores wait for every database initializer (A2's migrations, and the application's
 * Flyway or Liquibase), through Boot's database initialization detectors.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
		"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
		"org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass(A2Server.class)
@EnableConfigurationProperties(A2Properties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class A2AutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "a2.store.initialize-schema", havingValue = "always", matchIfMissing = true)
	A2SchemaInitializer a2SchemaInitializer(ObjectProvider<DataSource> dataSource, A2Properties properties) {
		return new A2SchemaInitializer(requireDataSource(dataSource), properties.getStore().isDistribute());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "a2.store.initialize-schema", havingValue = "never")
	A2SchemaCheck a2SchemaCheck(ObjectProvider<DataSource> dataSource) {
		return new A2SchemaCheck(requireDataSource(dataSource));
	}

	@Bean
	@ConditionalOnMissingBean
	EventStore a2EventStore(ObjectProvider<DataSource> dataSource,
			ObjectProvider<PlatformTransactionManager> transactionManager, ObjectProvider<Clock> clock,
			A2Properties properties) {
		DataSource source = requireDataSource(dataSource);
		// the application's clock, when it has one, stamps the events too: ages and lag read in its time
		return new PostgresEventStore(source,
				transactionManager.getIfUnique(() -> new DataSourceTransactionManager(source)), clock.getIfUnique(),
				properties.getStore().getAppendRounds());
	}

	/** Tells the streams and drainers of every instance that a session changed (LISTEN/NOTIFY). */
	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	SessionChanges a2SessionChanges(ObjectProvider<DataSource> dataSource) {
		return new PostgresSessionChanges(requireDataSource(dataSource));
	}

	@Bean
	@ConditionalOnMissingBean
	PresenceStore a2PresenceStore(ObjectProvider<DataSource> dataSource,
			ObjectProvider<PlatformTransactionManager> transactionManager) {
		DataSource source = requireDataSource(dataSource);
		return new PostgresPresenceStore(source, transactionManager.getIfUnique(() -> new DataSourceTransactionManager(source)));
	}

	@Bean
	@ConditionalOnMissingBean
	SnapshotStore a2SnapshotStore(ObjectProvider<DataSource> dataSource,
			ObjectProvider<PlatformTransactionManager> transactionManager) {
		DataSource source = requireDataSource(dataSource);
		return new PostgresSnapshotStore(source, transactionManager.getIfUnique(() -> new DataSourceTransactionManager(source)));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(Contract.class)
	A2Server a2Server(ObjectProvider<Contract> contracts, ObjectProvider<Consumer> consumers, EventStore eventStore,
			SnapshotStore snapshotStore, WorkStore workStore, PresenceStore presenceStore, SessionChanges sessionChanges,
			ObjectProvider<PlatformTransactionManager> transactionManager, ObjectProvider<JsonMapper> jsonMapper,
			ObjectProvider<PayloadValidator> payloadValidator, ObjectProvider<ObservationRegistry> observations,
			ObjectProvider<Clock> clock, ObjectProvider<RunInterceptor> interceptors, A2Properties properties,
			ConfigurableListableBeanFactory beanFactory) {
		JsonMapper mapper = jsonMapper.getIfUnique(() -> JsonMapper.builder().build());
		A2Server.Builder builder = A2Server.builder()
			.eventStore(eventStore)
			.snapshotStore(snapshotStore)
			.workStore(workStore)
			.presenceStore(presenceStore)
			.presenceTtl(properties.getPresence().getTtl())
			.sessionChanges(sessionChanges)
			.jsonMapper(mapper)
			.payloadValidator(payloadValidator.getIfUnique())
			.snapshotEvery(properties.getState().getSnapshotEvery())
			.stateCacheSize(properties.getState().getCacheSize())
			.drain(properties.getDrain().toSettings())
			.runConsumers(properties.getDrain().isEnabled())
			.drainScheduling(properties.getDrain().getScheduling())
			.stopGrace(properties.getDrain().getStopGrace());
		observations.ifUnique(builder::observationRegistry);
		clock.ifUnique(builder::clock);
		interceptors.orderedStream().forEach(builder::runInterceptor);
		// a push with a presence write, a clear and the work it ends: each one transaction
		transactionManager.ifUnique(builder::transactionManager);
		Map<String, Contract> byName = new LinkedHashMap<>();
		contracts.orderedStream().forEach((contract) -> {
			builder.contract(contract);
			byName.put(contract.name(), contract);
		});
		A2Properties.Drain drain = properties.getDrain();
		List<Consumer> all = new ArrayList<>(consumers.orderedStream().toList());
		all.addAll(AnnotatedConsumers.find(beanFactory, byName, mapper));
		drain.checkNamed(all);
		all.stream().filter(drain::registers).forEach(builder::consumer);
		return builder.build();
	}

	@Bean
	@ConditionalOnMissingBean
	WorkStore a2WorkStore(ObjectProvider<DataSource> dataSource, ObjectProvider<PlatformTransactionManager> transactionManager,
			EventStore eventStore, A2Properties properties) {
		DataSource source = requireDataSource(dataSource);
		return new PostgresWorkStore(source, transactionManager.getIfUnique(() -> new DataSourceTransactionManager(source)),
				eventStore, properties.getDrain().getMaxFailures(), properties.getDrain().getCursorBatch());
	}

	@Bean
	@ConditionalOnBean(A2Server.class)
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "a2.drain.enabled", matchIfMissing = true)
	A2DrainLifecycle a2DrainLifecycle(A2Server server, A2Properties properties) {
		return new A2DrainLifecycle(server,
				(properties.getDrain().getScheduling() == DrainScheduling.AUTOMATIC) ? properties.getDrain().getSweepInterval()
						: null);
	}

	private static DataSource requireDataSource(ObjectProvider<DataSource> dataSource) {
		DataSource source = dataSource.getIfUnique();
		if (source == null) {
			throw new IllegalStateException("A2 stores sessions in PostgreSQL and found no DataSource: add "
					+ "spring-boot-starter-jdbc and the PostgreSQL driver, and set spring.datasource.url "
					+ "(or define a DataSource bean)");
		}
		return source;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(jakarta.validation.Validator.class)
	static final class BeanValidationConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(jakarta.validation.Validator.class)
		PayloadValidator a2PayloadValidator(jakarta.validation.Validator validator) {
			return new BeanValidationPayloadValidator(validator);
		}

	}

}
