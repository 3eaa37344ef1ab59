package dev.a2.testkit;

import java.time.Clock;
import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Session;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @A2Test} on an application as many are written: it declares a {@code Clock} and a
 * {@code DataSource} of its own. A2 still runs on the kit's virtual clock and the test's schema, and
 * {@code @Nested} tests share the class's application and start clean as the class's own do.
 */
@A2Test(classes = A2TestApplicationIntegrationTests.Shop.class)
class A2TestApplicationIntegrationTests {

	record Note(String text) {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Shop {

		@Bean
		Contract orders() {
			return Contract.builder("orders").event("order.placed", Note.class).event("order.shipped", Note.class).build();
		}

		@Bean
		Consumer shipper() {
			return Consumer.builder("orders", "shipper")
				.types("order.placed")
				.run((context) -> NewEvent.of("order.shipped", new Note("shipped")));
		}

		/** The application's clock, for its own code. */
		@Bean
		Clock clock() {
			return Clock.systemUTC();
		}

		/** The application's database, which a test must not touch (nothing listens on port 1). */
		@Bean
		DataSource dataSource() {
			HikariDataSource dataSource = new HikariDataSource();
			dataSource.setJdbcUrl("jdbc:postgresql://localhost:1/production");
			return dataSource;
		}

	}

	@Autowired
	A2TestKit kit;

	@Autowired
	ApplicationContext context;

	@Test
	void eventsAreStampedWithTheVirtualClockThoughTheApplicationHasAClockOfItsOwn() {
		Event placed = this.kit.session("orders", "clock-1").append(NewEvent.of("order.placed", new Note("a pen"))).get(0);

		assertThat(placed.createdAt()).isEqualTo(this.kit.now());
		assertThat(this.context.getBean(Clock.class)).as("the clock the application's own code is given").isSameAs(this.kit.clock());
	}

	@Test
	void backOffsPassInVirtualTimeThoughTheApplicationHasAClockOfItsOwn() {
		Session session = this.kit.session("orders", "clock-2");
		this.kit.consumer("shipper").failNext(2);
		session.append(NewEvent.of("order.placed", new Note("a book")));

		this.kit.advance(Duration.ofMinutes(1));

		assertThat(session).hasEventTypes("order.placed", "order.shipped");
		assertThat(this.kit.journal().backOffs("shipper")).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

	@Test
	void theApplicationRunsOnTheTestsSchemaThoughItHasADataSourceOfItsOwn() {
		this.kit.session("orders", "schema-1").append(NewEvent.of("order.placed", new Note("a cup")));

		assertThat(this.context.getBean(DataSource.class)).isSameAs(this.kit.dataSource());
		assertThat(JdbcClient.create(this.kit.dataSource())
			.sql("SELECT count(*) FROM a2_event WHERE session_id = 'schema-1'")
			.query(Long.class)
			.single()).isEqualTo(1);
	}

	@Nested
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	class NestedTests {

		@Autowired
		A2TestKit nestedKit;

		@Autowired
		ApplicationContext nestedContext;

		@Test
		@Order(1)
		void aTestThatStagesAFaultAndRunsNothing() {
			A2TestApplicationIntegrationTests.this.kit.consumer("shipper").failNext(1);
		}

		@Test
		@Order(2)
		void theNextTestStartsWithNoStagedFaultAndAnEmptyJournal() {
			A2TestKit kit = A2TestApplicationIntegrationTests.this.kit;
			assertThat(kit.journal().runs()).isEmpty();
			Session session = kit.session("orders", "nested-2");
			session.append(NewEvent.of("order.placed", new Note("a book")));
			kit.drain();
			assertThat(session).hasEventTypes("order.placed", "order.shipped");
		}

		@Test
		@Order(3)
		void theNestedClassRunsInTheTestClasssApplication() {
			assertThat(this.nestedContext).isSameAs(A2TestApplicationIntegrationTests.this.context);
			assertThat(this.nestedKit).isSameAs(A2TestApplicationIntegrationTests.this.kit);
		}

	}

}
