package dev.a2;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A consumer {@code replier} of {@code message.sent}, aborted by a {@code note}, whose runs block like
 * a long call until their attempt is aborted, and then record why.
 */
final class BlockedReplier {

	private final CountDownLatch started = new CountDownLatch(1);

	private final AtomicReference<A2Exception> reason = new AtomicReference<>();

	final Consumer consumer = Consumer.builder("chat", "replier").types("message.sent").abortOn("note").run((context) -> {
		this.started.countDown();
		TestContracts.blockUntilAborted();
		this.reason.set(context.signal().reason());
		return null;
	});

	/** Whether a run started within 20 s. */
	boolean started() throws InterruptedException {
		return this.started.await(20, TimeUnit.SECONDS);
	}

	/** Why the run was aborted; {@code null} while it runs. */
	A2Exception reason() {
		return this.reason.get();
	}

}
