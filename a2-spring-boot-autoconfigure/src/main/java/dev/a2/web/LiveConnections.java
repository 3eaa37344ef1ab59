package dev.a2.web;

import java.util.concurrent.atomic.AtomicInteger;

/** How many SSE streams and sockets are open on this instance now. */
public final class LiveConnections {

	final AtomicInteger streams = new AtomicInteger();

	final AtomicInteger sockets = new AtomicInteger();

	public int streams() {
		return this.streams.get();
	}

	public int sockets() {
		return this.sockets.get();
	}

}
