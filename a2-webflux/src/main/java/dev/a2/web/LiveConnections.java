package dev.a2.web;

import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.context.SmartLifecycle;

/**
 * The SSE streams and sockets open on this instance: how many there are, and what ends them when the
 * application stops. They end before the web server's graceful shutdown waits for active requests,
 * which a stream never stops being: a stream completes (the browser's {@code EventSource} comes back
 * with {@code Last-Event-ID}, to another instance), a socket closes with 1001 (going away).
 */
public final class LiveConnections implements SmartLifecycle {

	/** Spring Boot's graceful shutdown stops at {@code DEFAULT_PHASE - 1024}; this stops before it. */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

	final AtomicInteger streams = new AtomicInteger();

	final AtomicInteger sockets = new AtomicInteger();

	private volatile Sinks.Empty<Void> stopping = Sinks.empty();

	private volatile boolean running;

	private boolean stopped;

	/** How many streams are open. */
	public int streams() {
		return this.streams.get();
	}

	/** How many sockets are open. */
	public int sockets() {
		return this.sockets.get();
	}

	/** Completes when the application stops; at once for connections opened after that. */
	Mono<Void> stopping() {
		return this.stopping.asMono();
	}

	@Override
	public synchronized void start() {
		if (this.stopped) {
			// started again after a stop: connections from now on live until the next stop
			this.stopping = Sinks.empty();
			this.stopped = false;
		}
		this.running = true;
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		this.stopped = true;
		this.stopping.tryEmitEmpty();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
