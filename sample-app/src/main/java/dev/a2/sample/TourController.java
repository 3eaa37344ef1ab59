package dev.a2.sample;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

import dev.a2.A2Server;
import dev.a2.Session;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sample's own routes beside A2's router (which serves push, history, stream, state, presence
 * and clear under {@code /a2}). A2 calls JDBC, so the calls run on the bounded elastic scheduler,
 * never on an event-loop thread.
 */
@RestController
class TourController {

	private final A2Server a2;

	private final RoomWords words;

	private final Delivery delivery;

	TourController(A2Server a2, RoomWords words, Delivery delivery) {
		this.a2 = a2;
		this.words = words;
		this.delivery = delivery;
	}

	/**
	 * Read your writes: drives the room's word-count projection through every event written so far,
	 * then reads it, so a message just sent is counted.
	 */
	@GetMapping("/rooms/{room}/words")
	Mono<Map<String, Object>> words(@PathVariable String room) {
		return blocking(() -> {
			Session session = this.a2.session("chat", room);
			long through = session.consume("word-count");
			return Map.of("room", room, "through", through, "words", this.words.words(session));
		});
	}

	@GetMapping("/demo/refused-word")
	Map<String, String> refusedWord() {
		return Map.of("word", this.delivery.refusedWord());
	}

	/** Which word the delivery consumer refuses; an empty word lets every message through. */
	@PutMapping("/demo/refused-word")
	Map<String, String> refuse(@RequestBody Map<String, String> body) {
		this.delivery.refuse(Objects.requireNonNullElse(body.get("word"), ""));
		return refusedWord();
	}

	private static <T> Mono<T> blocking(Callable<T> call) {
		return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
	}

}
