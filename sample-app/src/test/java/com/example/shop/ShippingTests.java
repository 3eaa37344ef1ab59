package com.example.shop;

import java.time.Duration;

import com.example.shop.ShopApplication.OrderPlaced;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.testkit.A2Test;
import dev.a2.testkit.A2TestKit;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

@A2Test(consumers = "shipper")
class ShippingTests {

	@Autowired
	A2TestKit kit;

	@Test
	void anOrderIsShippedOnceAfterTwoFailures() {
		Session order = kit.session("orders", "order-1");
		kit.consumer("shipper").failNext(2);
		order.append(NewEvent.of("order.placed", new OrderPlaced("book-1", 2)));
		kit.advance(Duration.ofMinutes(1));
		assertThat(order).hasEventTypes("order.placed", "order.shipped")
			.hasEventCausedBy("order.shipped", "shipper");
		assertThat(kit.journal().backOffs("shipper")).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

}
