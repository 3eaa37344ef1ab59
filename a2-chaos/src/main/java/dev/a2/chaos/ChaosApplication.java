package dev.a2.chaos;

import dev.a2.Contract;
import jakarta.validation.constraints.NotBlank;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * The application the chaos harness runs as several processes on one PostgreSQL: writers push
 * {@code order.placed} over A2's HTTP routes, and every consumer of {@link OrderConsumers} records
 * its effect as an {@code effect.recorded} event, so that what happened can be checked with SQL.
 */
@SpringBootApplication
public class ChaosApplication {

	/**
	 * An order of a customer. {@code poison} orders make the {@code picky} consumer fail for good (the
	 * only dead letters the harness accepts); {@code flaky} ones make it fail its first attempt.
	 */
	public record OrderPlaced(@NotBlank String customer, long sequence, boolean poison, boolean flaky) {
	}

	/** What a consumer did for a trigger: one such event per (trigger, consumer), never two. */
	public record EffectRecorded(String trigger, long triggerIndex, String consumer, String customer) {
	}

	@Bean
	Contract orders() {
		return Contract.builder("orders")
			.event("order.placed", OrderPlaced.class)
			.event("effect.recorded", EffectRecorded.class)
			.build();
	}

	public static void main(String[] args) {
		SpringApplication.run(ChaosApplication.class, args);
	}

}
