package dev.a2.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
 * <p>
 * They are few, as many as Reactor Netty's event loops ({@link #THREADS}), however many streams are
 * open: a write here never waits for its client. Spring's adapter writes with the servlet API's
 * non-blocking output (a {@code WriteListener}): it writes and flushes only while the output stream
 * {@code isReady()}, which a servlet container (Tomcat, Jetty) answers without waiting, and a client
 * that reads slowly leaves the rest to the container's own thread once it can take more
 * ({@code onWritePossible}). A task holds its thread only while it hands bytes over, so a slow client
 * cannot hold one from the others, and a task waiting in the queue waits for no other task. A pool
 * that grew a thread for every write in flight kept one per open stream at a burst: 103 threads for
 * 1,000 streams, 338 for 2,000, on 2 cores.
 */
final class ServletWrites implements AutoCloseable {

	/** The writing threads: the processors, and at least 4, as Reactor Netty's event loops. */
	static final int THREADS = Math.max(Runtime.getRuntime().availableProcessors(), 4);

	private final ThreadPoolExecutor executor;

	private final Scheduler scheduler;

	ServletWrites() {
		AtomicInteger threads = new AtomicInteger();
		// one queued task at most per response (a publishOn drains its queue in one task), so the queue
		// is bounded by the open connections
		this.executor = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				(task) -> {
					Thread thread = new Thread(task, "a2-servlet-write-" + threads.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.executor.allowCoreThreadTimeOut(true);
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
