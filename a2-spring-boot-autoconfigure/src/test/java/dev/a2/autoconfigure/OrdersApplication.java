package dev.a2.autoconfigure;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.spring.A2Consumer;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;

/**
 * An application that uses A2 as users will: a contract bean and annotated consumers of every lane kind.
 */
@SpringBootApplication
class OrdersApplication {

	record OrderPlaced(String sku, int quantity) {
	}

	record OrderShipped(String sku) {
	}

	record Poison(String why) {
	}

	@Bean
	Contract orders() {
		return Contract.builder("orders")
			.event("order.placed", OrderPlaced.class)
			.event("order.shipped", OrderShipped.class)
			.event("poison", Poison.class)
			.build();
	}

	@Component
	static class OrderConsumers {

		final List<String> mailed = new CopyOnWriteArrayList<>();

		final List<Long> ledger = new CopyOnWriteArrayList<>();

		final AtomicBoolean healed = new AtomicBoolean();

		final List<String> survived = new CopyOnWriteArrayList<>();

		@A2Consumer(contract = "orders", name = "mailer", types = "order.placed")
		void mail(OrderPlaced order) {
			this.mailed.add(order.sku());
		}

		@A2Consumer(contract = "orders", name = "shipper", types = "order.placed", laneKey = "#payload.sku()")
		NewEvent ship(OrderPlaced order, ConsumerContext context) {
			return NewEvent.of("order.shipped", new OrderShipped(order.sku()));
		}

		@A2Consumer(contract = "orders", name = "ledger", types = { "order.placed", "order.shipped" }, lane = "ledger")
		Mono<Void> record(ConsumerContext context) {
			return Mono.fromRunnable(() -> this.ledger.add(context.event().index()));
		}

		@A2Consumer(contract = "orders", name = "fragile", types = "poison")
		CompletionStage<List<NewEvent>> digest(Poison poison) {
			if (!this.healed.get()) {
				return CompletableFuture.failedFuture(new NonRetriableException("cannot digest " + poison.why()));
			}
			this.survived.add(poison.why());
			return CompletableFuture.completedFuture(List.of());
		}

	}

}
