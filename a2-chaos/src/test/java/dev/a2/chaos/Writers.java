package dev.a2.chaos;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Clients pushing {@code order.placed} batches over HTTP to whichever process is up, at a steady
 * rate. A push that gets no 2xx is sent again, whole and with the same ids, to any process, until
 * one acknowledges it: the ids make the retry safe (an event already stored is answered, not
 * stored again).
 */
final class Writers {

	private static final JsonMapper json = JsonMapper.builder().build();

	private final int writers;

	private final long events;

	private final double eventsPerSecond;

	private final int sessions;

	private final Supplier<AppProcess> target;

	private final Ledger ledger;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final AtomicLong claimedEvents = new AtomicLong();

	private final AtomicLong nextPush = new AtomicLong();

	private final String run = Long.toString(System.currentTimeMillis(), 36);

	private volatile long startedAt;

	private volatile boolean stopped;

	/**
	 * @param events how many events to push at most ({@code Long.MAX_VALUE} to push until {@link #stop})
	 * @param target picks a process that is up
	 */
	Writers(int writers, long events, double eventsPerSecond, int sessions, Supplier<AppProcess> target, Ledger ledger) {
		this.writers = writers;
		this.events = events;
		this.eventsPerSecond = eventsPerSecond;
		this.sessions = sessions;
		this.target = target;
		this.ledger = ledger;
	}

	/** Pushes until every event was acknowledged, or until {@link #stop} and the pushes begun are; answers when done. */
	void run() {
		this.startedAt = System.nanoTime();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < this.writers; i++) {
			Thread thread = new Thread(this::write, "writer-" + i);
			threads.add(thread);
			thread.start();
		}
		for (Thread thread : threads) {
			try {
				thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	void stop() {
		this.stopped = true;
	}

	private void write() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		while (!this.stopped) {
			int size = 1 + random.nextInt(10);
			long first = this.claimedEvents.getAndAdd(size);
			if (first >= this.events) {
				return;
			}
			size = (int) Math.min(size, this.events - first);
			pace(first);
			long push = this.nextPush.incrementAndGet();
			String session = "s-" + (push % this.sessions);
			String body = batch(push, size, random);
			deliver(session, body);
		}
	}

	/** Holds the steady rate: the event numbered {@code first} goes out at its time. */
	private void pace(long first) {
		long due = this.startedAt + (long) (first / this.eventsPerSecond * 1e9);
		long wait = due - System.nanoTime();
		if (wait > 0) {
			AppProcess.pause(Duration.ofNanos(wait));
		}
	}

	private String batch(long push, int size, ThreadLocalRandom random) {
		StringBuilder body = new StringBuilder("{\"events\":[");
		for (int i = 0; i < size; i++) {
			// about one order in 200 is poison (a dead letter of `picky`), one in 40 flaky (a retry)
			int roll = random.nextInt(200);
			body.append((i > 0) ? "," : "")
				.append("{\"type\":\"order.placed\",\"id\":\"o-").append(this.run).append('-').append(push).append('-').append(i)
				.append("\",\"payload\":{\"customer\":\"c").append(random.nextInt(4))
				.append("\",\"sequence\":").append(push * 100 + i)
				.append(",\"poison\":").append(roll == 0)
				.append(",\"flaky\":").append(roll > 0 && roll <= 5).append("}}");
		}
		return body.append("]}").toString();
	}

	private void deliver(String session, String body) {
		this.ledger.pushed();
		long backoff = 50;
		// a push begun is tried until acknowledged, even after stop: the ledger must know its fate
		long giveUp = System.nanoTime() + Duration.ofMinutes(3).toNanos();
		for (int attempt = 1; System.nanoTime() < giveUp; attempt++) {
			if (attempt > 1) {
				this.ledger.retried();
				AppProcess.pause(Duration.ofMillis(backoff));
				backoff = Math.min(backoff * 2, 1000);
			}
			AppProcess process = this.target.get();
			if (process == null) {
				continue;
			}
			HttpRequest request = HttpRequest.newBuilder(process.uri("/a2/orders/sessions/" + session + "/events"))
				.timeout(Duration.ofSeconds(15))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString(body))
				.build();
			HttpResponse<String> response;
			try {
				response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException ex) {
				this.ledger.unreachable();
				continue;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			if (response.statusCode() / 100 == 2) {
				for (JsonNode event : json.readTree(response.body()).get("events")) {
					this.ledger.acknowledged(new Ledger.Ack(session, event.get("id").asString(), event.get("index").asLong()));
				}
				return;
			}
			if (response.statusCode() == 503 && response.body().contains("\"STORE_UNAVAILABLE\"")) {
				this.ledger.unavailable();
			}
			else {
				this.ledger.unexpected(response.statusCode() + " " + response.body());
			}
		}
		this.ledger.unexpected("a push to " + session + " was never acknowledged");
	}

}
