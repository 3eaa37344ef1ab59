package dev.a2.sample;

import java.util.List;
import java.util.Map;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Event;
import dev.a2.HistoryPage;
import dev.a2.NewEvent;
import dev.a2.SessionState;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small HTTP face for the sample's rooms. A2 calls JDBC, so every call runs on the bounded
 * elastic scheduler, never on an event-loop thread.
 */
@RestController
@RequestMapping("/rooms/{room}")
class ChatController {

	private final A2Server a2;

	private final ChatConsumers consumers;

	ChatController(A2Server a2, ChatConsumers consumers) {
		this.a2 = a2;
		this.consumers = consumers;
	}

	@PostMapping("/messages")
	Mono<List<Event>> send(@PathVariable String room, @RequestBody ChatContract.MessageSent message,
			@RequestParam(required = false) String id) {
		return blocking(() -> this.a2.session("chat", room).append(new NewEvent("message.sent", message, id)));
	}

	@GetMapping("/messages")
	Mono<HistoryPage> history(@PathVariable String room, @RequestParam(defaultValue = "0") long after,
			@RequestParam(defaultValue = "100") int limit) {
		return blocking(() -> this.a2.session("chat", room).history(after, limit));
	}

	@GetMapping("/summary")
	Mono<SessionState<?>> summary(@PathVariable String room) {
		return blocking(() -> this.a2.session("chat", room).state("summary"));
	}

	/** Read your writes: drives the word-count projection of the room to its head before answering. */
	@GetMapping("/words")
	Mono<Map<String, Object>> words(@PathVariable String room) {
		return blocking(() -> {
			long through = this.a2.session("chat", room).consume("word-count");
			return Map.of("through", through, "words", this.consumers.words(room));
		});
	}

	@DeleteMapping
	Mono<Map<String, Long>> clear(@PathVariable String room, @RequestParam(required = false) Long ifLastIndex) {
		return blocking(() -> {
			var session = this.a2.session("chat", room);
			long marker = (ifLastIndex != null) ? session.clear(ifLastIndex) : session.clear();
			return Map.of("clearedAt", marker);
		});
	}

	@ExceptionHandler
	ResponseEntity<Map<String, Object>> error(A2Exception ex) {
		return ResponseEntity.status(HttpStatus.valueOf(ex.code().httpStatus()))
			.body(Map.of("error", Map.of("code", ex.code().name(), "message", String.valueOf(ex.getMessage()))));
	}

	private static <T> Mono<T> blocking(java.util.concurrent.Callable<T> call) {
		return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
	}

}
