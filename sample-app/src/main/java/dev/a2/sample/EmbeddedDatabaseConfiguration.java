package dev.a2.sample;

import java.io.IOException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Without {@code spring.datasource.url}, the sample runs on a real PostgreSQL started from the
 * binaries of a Maven Central artifact, with durable commits; its data lives as long as the process.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(EmbeddedDatabaseConfiguration.NoDataSourceUrl.class)
class EmbeddedDatabaseConfiguration {

	/**
	 * Stopped by the application as it closes, after what uses it (the data source depends on it). Its
	 * own shutdown hook would stop it while the application still closes: the JVM runs every hook at
	 * once, and A2's last writes met a server going away.
	 */
	@Bean(destroyMethod = "close")
	EmbeddedPostgres embeddedPostgres() throws IOException {
		return EmbeddedPostgres.builder()
			.setServerConfig("synchronous_commit", "on")
			.setRegisterShutdownHook(false)
			.start();
	}

	@Bean
	DataSource dataSource(EmbeddedPostgres postgres) {
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(postgres.getJdbcUrl("postgres", "postgres"));
		dataSource.setUsername("postgres");
		dataSource.setPoolName("a2-sample-embedded");
		return dataSource;
	}

	static class NoDataSourceUrl extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			String url = context.getEnvironment().getProperty("spring.datasource.url");
			return (url == null || url.isBlank()) ? ConditionOutcome.match("no spring.datasource.url: embedded PostgreSQL")
					: ConditionOutcome.noMatch("spring.datasource.url is set");
		}

	}

}
