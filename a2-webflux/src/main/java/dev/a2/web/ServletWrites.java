package dev.a2.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;

/**
 * Writes the responses of {@link A2Servlet} on threads of its own, never on A2's store threads. A
 * route answers on the store thread its work ran on, and Reactor interrupts a store thread when what
 * it runs is cancelled from another thread; a servlet container writes on the thread that writes
 * (Reactor Netty hands writes to its event loop), and an interrupted write closes the connection: the
 * client saw it closed before the response. No one interrupts these threads.
 */
final class ServletWrites implements AutoCloseable {

	private final ExecutorService executor;

	private final Scheduler scheduler;

	ServletWrites() {
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "a2-servlet-write-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		// an Executor, not an ExecutorService: Reactor then cancels its tasks without interrupting them
		this.scheduler = Schedulers.fromExecutor(this.executor::execute);
	}

	/**
	 * The response, written on these threads, and not before {@code returned} completes: the filters in
	 * front of the servlet have returned ({@link A2ServletGate}), so that none of them writes the
	 * response's headers at the same time. Without a gate it is written at once.
	 */
	ServerHttpResponse decorate(ServerHttpResponse response, @Nullable CompletableFuture<Void> returned) {
		Mono<Void> gate = (returned != null) ? Mono.fromFuture(returned, true).publishOn(this.scheduler) : Mono.empty();
		return new ServerHttpResponseDecorator(response) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				return gate.then(Mono.defer(() -> super.writeWith(Flux.from(body).publishOn(ServletWrites.this.scheduler))));
			}

			@Override
			public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
				return gate.then(Mono.defer(
						() -> super.writeAndFlushWith(Flux.from(body).publishOn(ServletWrites.this.scheduler))));
			}

			@Override
			public Mono<Void> setComplete() {
				return gate.then(Mono.defer(super::setComplete));
			}

		};
	}

	@Override
	public void close() {
		this.executor.shutdown();
	}

}
