package com.example.shop;

import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.spring.A2Consumer;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;

@SpringBootApplication
public class ShopApplication {

	public static void main(String[] args) {
		SpringApplication.run(ShopApplication.class, args);
	}

	public record OrderPlaced(@NotBlank String sku, @Positive int quantity) {
	}

	public record OrderShipped(String sku) {
	}

	// the event types of an "orders" session and the records their payloads bind to
	@Bean
	Contract orders() {
		return Contract.builder("orders")
			.event("order.placed", OrderPlaced.class)
			.event("order.shipped", OrderShipped.class)
			.build();
	}

	@Component
	static class Shipping {

		// run for every placed order, retried when it throws; the event it returns is appended once
		@A2Consumer(contract = "orders", name = "shipper", types = "order.placed")
		NewEvent ship(OrderPlaced order) {
			return NewEvent.of("order.shipped", new OrderShipped(order.sku()));
		}

	}

}
