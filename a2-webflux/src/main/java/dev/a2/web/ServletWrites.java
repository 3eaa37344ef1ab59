package dev.a2.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseCookie;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Writes the responses of {@link A2Servlet}, and of A2's routes under WebFlux on a servlet container
 * ({@link #onServletContainers()}), on threads of its own, never on A2's store threads. A
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

	/** Marks a request whose response these threads write already. */
	private static final String WRITTEN = ServletWrites.class.getName() + ".written";

	private final ThreadPoolExecutor executor;

	private final Scheduler scheduler;

	ServletWrites() {
		AtomicInteger threads = new AtomicInteger();
		// one queued task at most per response (a publishOn drains its queue in one task), so the queue
		// is bounded by the open connections; a lock-free queue, as tasks are handed in from non-blocking
		// threads (a stream's ping on Reactor's parallel scheduler): a LinkedBlockingQueue's lock, contended
		// by 200 streams pinging at once, parked such a thread (BlockHound failed the stream)
		this.executor = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedTransferQueue<>(),
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
	 * response's headers at the same time. Without a gate it is written at once. With the request's
	 * asynchronous context, the container does not end the request while one of these threads is inside
	 * it, and nothing is written after ({@link Ending}).
	 */
	ServerHttpResponse decorate(ServerHttpResponse response, @Nullable CompletableFuture<Void> returned,
			@Nullable AsyncContext async) {
		Scheduler writes = this.scheduler;
		if (async != null) {
			async.getRequest().setAttribute(WRITTEN, Boolean.TRUE);
			Ending ending = new Ending();
			async.addListener(ending);
			writes = Schedulers.fromExecutor((task) -> this.executor.execute(() -> ending.run(task)));
		}
		Scheduler scheduler = writes;
		Mono<Void> gate = (returned != null) ? Mono.fromFuture(returned, true).publishOn(scheduler) : Mono.empty();
		return new ServerHttpResponseDecorator(response) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				return gate.then(Mono.defer(() -> super.writeWith(Flux.from(body).publishOn(scheduler))));
			}

			@Override
			public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
				return gate.then(Mono.defer(() -> super.writeAndFlushWith(Flux.from(body).publishOn(scheduler))));
			}

			@Override
			public Mono<Void> setComplete() {
				return gate.then(Mono.defer(super::setComplete));
			}

		};
	}

	/**
	 * Keeps a request's end and its writes on these threads apart. Tomcat (11.0.22) reports a failed
	 * flush by handing the request's end to one of its own threads before it has done with the failure on
	 * the flushing thread; when that thread is not Tomcat's, Tomcat could end the request and give its
	 * processor to a new connection first, and the failure was then recorded on the new connection, which
	 * Tomcat closed before answering it (a fresh request or a new stream, whenever 200 stream clients left
	 * at once). Here the container's end of the request ({@code onError}, {@code onComplete},
	 * {@code onTimeout}, on the container's thread) waits for a write under way, and no write starts
	 * after it: the response is over.
	 */
	static final class Ending implements AsyncListener {

		/** Long enough for any hand-over of bytes; a write held longer than this is not waited for. */
		private static final long WAIT_SECONDS = 10;

		private final ReentrantLock lock = new ReentrantLock();

		private volatile boolean ended;

		void run(Runnable write) {
			this.lock.lock();
			try {
				if (!this.ended) {
					write.run();
				}
			}
			finally {
				this.lock.unlock();
			}
		}

		private void end() {
			boolean locked = false;
			try {
				locked = this.lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.ended = true;
			if (locked) {
				this.lock.unlock();
			}
		}

		@Override
		public void onComplete(AsyncEvent event) {
			end();
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			end();
		}

		@Override
		public void onError(AsyncEvent event) {
			end();
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
			// the same request dispatched again keeps its listeners only if they add themselves back
			event.getAsyncContext().addListener(this);
		}

	}

	/**
	 * A2's routes served by WebFlux on a servlet container (a WebFlux application on Tomcat), their answers
	 * written as {@link A2Servlet} writes them: a route answers on a store thread, which must not write
	 * there, and a stream's failed write must not reach another connection ({@link Ending}). The threads are
	 * made at the first such request; idle, they end after a minute. Requests {@link A2Servlet} serves are
	 * written by its own.
	 */
	static HandlerFilterFunction<ServerResponse, ServerResponse> onServletContainers() {
		AtomicReference<@Nullable ServletWrites> made = new AtomicReference<>();
		return (request, next) -> {
			ServerWebExchange exchange = request.exchange();
			if (!(ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest()) instanceof HttpServletRequest http)
					|| http.getAttribute(WRITTEN) != null || !http.isAsyncStarted()) {
				return next.handle(request);
			}
			ServletWrites writes = made.updateAndGet((known) -> (known != null) ? known : new ServletWrites());
			AsyncContext async = http.getAsyncContext();
			return next.handle(request).map((answer) -> new ServerResponse() {

				@Override
				public HttpStatusCode statusCode() {
					return answer.statusCode();
				}

				@Override
				public HttpHeaders headers() {
					return answer.headers();
				}

				@Override
				public MultiValueMap<String, ResponseCookie> cookies() {
					return answer.cookies();
				}

				@Override
				public Mono<Void> writeTo(ServerWebExchange to, Context context) {
					return answer.writeTo(to.mutate().response(writes.decorate(to.getResponse(), null, async)).build(),
							context);
				}

			});
		};
	}

	/**
	 * Stops the threads and waits for them to end (a write never waits, so they end at once): the servlet
	 * container looks for threads the application left running as soon as the servlet is destroyed, and
	 * Tomcat warns of each as a likely leak.
	 */
	@Override
	public void close() {
		this.executor.shutdown();
		try {
			this.executor.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
