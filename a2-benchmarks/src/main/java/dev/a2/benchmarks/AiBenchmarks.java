package dev.a2.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.DrainSettings;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents;
import dev.a2.ai.ReplySettings;
import dev.a2.ai.ReplyStream;
import io.netty.channel.ChannelOption;
import reactor.core.Disposable;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;

/**
 * What a model's reply costs, each figure beside a reply written a row per token
 * ({@code flush-tokens=1}) in the same run: rows per 500-token reply, model-token to SSE-subscriber
 * latency over real HTTP, and concurrent replies at 50 tokens/s each until the append path saturates.
 */
final class AiBenchmarks {

	private static final int TOKENS = 500;

	private static final Duration TOKEN_DELAY = Duration.ofMillis(20);

	/** Tokens of each reply in the load rows: 10 s at 50 tokens/s, so that starting the runs weighs little. */
	private static final int LOAD_TOKENS = 500;

	private static final int[] CONCURRENT_REPLIES = { 10, 50, 100, 200, 400 };

	private static final ReplySettings PER_TOKEN = ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(50), 1);

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
	};

	private static final Pattern TOKEN = Pattern.compile("t(\\d+) ");

	/** When the model emitted each token of the latency rows, by the token's number. */
	static final AtomicLongArray emitted = new AtomicLongArray(4 * TOKENS);

	static final AtomicInteger tokenNumbers = new AtomicInteger();

	record Asked(String text) {
	}

	private final DataSource dataSource;

	private final String jdbcUrl;

	private final AtomicLong sessions = new AtomicLong();

	AiBenchmarks(DataSource dataSource, String jdbcUrl) {
		this.dataSource = dataSource;
		this.jdbcUrl = jdbcUrl;
	}

	void run(Table table) throws Exception {
		long perToken = deltaRows(PER_TOKEN);
		for (Duration interval : List.of(Duration.ofMillis(50), Duration.ofMillis(250))) {
			long coalesced = deltaRows(ReplySettings.DEFAULTS.withFlush(interval, 64));
			table.row("AI reply: reply.delta rows per " + TOKENS + "-token reply at 50 tokens/s, flush-interval "
					+ interval.toMillis() + " ms", Long.toString(coalesced), Long.toString(perToken),
					ratio(coalesced, perToken));
		}
		latency(table);
		load(table);
	}

	// --- rows per reply

	private long deltaRows(ReplySettings settings) throws InterruptedException {
		ReplyStream replies = new ReplyStream(settings);
		ChatModel model = new PacedModel(TOKENS, false);
		Contract.Builder contract = Contract.builder("ai-bench").event("asked", Asked.class);
		AiEvents.register(contract);
		try (A2Server server = A2Server.builder()
			.dataSource(this.dataSource)
			.contract(contract.build())
			.consumer(assistant("ai-bench", replies, model))
			.build()) {
			Session session = server.session("ai-bench", "reply-" + System.nanoTime());
			session.append(NewEvent.of("asked", new Asked("a long answer, please")));
			long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
			while (events(session).stream().noneMatch((event) -> event.type().equals(AiEvents.REPLY_COMPLETED))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("the reply did not complete within 2 minutes");
				}
				Thread.sleep(100);
			}
			return events(session).stream().filter((event) -> event.type().equals(AiEvents.REPLY_DELTA)).count();
		}
	}

	private static List<Event> events(Session session) {
		return session.history(0, 1000).events();
	}

	private static Consumer assistant(String contract, ReplyStream replies, ChatModel model) {
		return Consumer.builder(contract, "assistant").types("asked").run((context) -> {
			replies.stream(context, model.stream(new Prompt("go")));
			return null;
		});
	}

	// --- model token to SSE subscriber

	/**
	 * One {@value #TOKENS}-token reply per flush setting, streamed by a consumer of a running
	 * application, read by an SSE subscriber of that application over HTTP: the time from the model
	 * emitting a token to the subscriber holding the delta that carries it.
	 */
	private void latency(Table table) {
		System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
		try (ConfigurableApplicationContext app = new SpringApplicationBuilder(BenchApplication.class, AiApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "spring.datasource.url=" + this.jdbcUrl, "spring.datasource.username=postgres",
					"spring.datasource.hikari.maximum-pool-size=24", "a2.store.initialize-schema=never",
					"spring.main.banner-mode=off")
			.run()) {
			int port = ((WebServerApplicationContext) app).getWebServer().getPort();
			WebClient client = WebClient.builder()
				.baseUrl("http://localhost:" + port)
				.clientConnector(new ReactorClientHttpConnector(HttpClient.create().option(ChannelOption.TCP_NODELAY, true)))
				.build();
			A2Server server = app.getBean(A2Server.class);
			long[] perToken = latencies(client, server, AiApplication.PER_TOKEN);
			long[] coalesced = latencies(client, server, AiApplication.COALESCED);
			table.row("AI reply: model token to SSE subscriber over HTTP, " + TOKENS
					+ "-token reply at 50 tokens/s, default flush 50 ms / 64, p50 ms",
					millis(percentile(coalesced, 50)), millis(percentile(perToken, 50)),
					ratio(percentile(coalesced, 50), percentile(perToken, 50)));
			table.row("AI reply: model token to SSE subscriber over HTTP, p99 ms",
					millis(percentile(coalesced, 99)), millis(percentile(perToken, 99)),
					ratio(percentile(coalesced, 99), percentile(perToken, 99)));
		}
	}

	private long[] latencies(WebClient client, A2Server server, String contract) {
		String session = "latency-" + this.sessions.incrementAndGet();
		List<Long> measured = new ArrayList<>();
		AtomicInteger completed = new AtomicInteger();
		Disposable stream = client.get()
			.uri("/a2/{contract}/sessions/{session}/stream", contract, session)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(SSE)
			.filter((event) -> "events".equals(event.event()))
			.subscribe((event) -> {
				long now = System.nanoTime();
				for (JsonNode stored : json.readTree(event.data()).get("events")) {
					String type = stored.get("type").asString();
					if (type.equals(AiEvents.REPLY_DELTA)) {
						Matcher tokens = TOKEN.matcher(stored.get("payload").get("text").asString());
						synchronized (measured) {
							while (tokens.find()) {
								measured.add(now - emitted.get(Integer.parseInt(tokens.group(1))));
							}
						}
					}
					else if (type.equals(AiEvents.REPLY_COMPLETED)) {
						completed.incrementAndGet();
					}
				}
			});
		try {
			// the stream subscribes asynchronously: a pause lets it settle before the reply starts
			LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
			server.session(contract, session).append(NewEvent.of("asked", new Asked("a long answer, please")));
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (completed.get() == 0 && System.nanoTime() < deadline) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
		}
		finally {
			stream.dispose();
		}
		synchronized (measured) {
			if (measured.size() != TOKENS) {
				throw new IllegalStateException("the subscriber received " + measured.size() + " of " + TOKENS + " tokens");
			}
			long[] sorted = measured.stream().mapToLong(Long::longValue).toArray();
			Arrays.sort(sorted);
			return sorted;
		}
	}

	/** The consumers of the latency rows, added to {@link BenchApplication} (not a component: the web rows leave it out). */
	static class AiApplication {

		static final String COALESCED = "ai-coalesced";

		static final String PER_TOKEN = "ai-per-token";

		@Bean
		Contract aiCoalesced() {
			return AiEvents.register(Contract.builder(COALESCED).event("asked", Asked.class)).build();
		}

		@Bean
		Contract aiPerToken() {
			return AiEvents.register(Contract.builder(PER_TOKEN).event("asked", Asked.class)).build();
		}

		@Bean
		Consumer coalescedAssistant() {
			return assistant(COALESCED, new ReplyStream(ReplySettings.DEFAULTS), new PacedModel(TOKENS, true));
		}

		@Bean
		Consumer perTokenAssistant() {
			return assistant(PER_TOKEN, new ReplyStream(AiBenchmarks.PER_TOKEN), new PacedModel(TOKENS, true));
		}

	}

	// --- concurrent replies

	/**
	 * N replies at once, each {@value #LOAD_TOKENS} tokens at 50 tokens/s, coalesced beside a row per
	 * token: tokens/s and rows/s that reached the log; N rises until both fall under 90% of offered.
	 */
	private void load(Table table) throws InterruptedException {
		boolean coalescedKeeps = true;
		boolean perTokenKeeps = true;
		for (int n : CONCURRENT_REPLIES) {
			if (!coalescedKeeps && !perTokenKeeps) {
				break;
			}
			double offered = n * (1000.0 / TOKEN_DELAY.toMillis());
			double[] coalesced = coalescedKeeps ? concurrentReplies(n, ReplySettings.DEFAULTS) : null;
			double[] perToken = perTokenKeeps ? concurrentReplies(n, PER_TOKEN) : null;
			String name = String.format(Locale.ROOT, "AI replies: %d concurrent × 50 tokens/s (offered %,.0f tokens/s), ", n, offered);
			table.row(name + "tokens/s into the log", rate(coalesced, 0), rate(perToken, 0),
					(coalesced != null && perToken != null) ? ratio(coalesced[0], perToken[0]) : "");
			table.row(name + "reply.delta rows/s", rate(coalesced, 1), rate(perToken, 1),
					(coalesced != null && perToken != null) ? ratio(coalesced[1], perToken[1]) : "");
			coalescedKeeps = coalesced != null && coalesced[0] >= 0.9 * offered;
			perTokenKeeps = perToken != null && perToken[0] >= 0.9 * offered;
		}
	}

	/** Tokens/s and delta rows/s from the first question to the last reply completed. */
	private double[] concurrentReplies(int n, ReplySettings settings) throws InterruptedException {
		ChatModel model = new PacedModel(LOAD_TOKENS, false);
		Contract.Builder contract = Contract.builder("ai-load").event("asked", Asked.class);
		AiEvents.register(contract);
		String prefix = "load-" + this.sessions.incrementAndGet() + "-";
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		try (A2Server server = A2Server.builder()
			.dataSource(this.dataSource)
			.contract(contract.build())
			// room for every reply and for the permits two claim loops reserve: with concurrency n alone,
			// sessions found no permit while a loop held them and waited for a sweep (5 of 10 did not start in 60 s)
			.drain(DrainSettings.DEFAULTS.withConcurrency(n + 2 * DrainSettings.DEFAULTS.claimBatch()))
			.consumer(assistant("ai-load", new ReplyStream(settings), model))
			.build()) {
			long start = System.nanoTime();
			for (int i = 0; i < n; i++) {
				server.session("ai-load", prefix + i).append(NewEvent.of("asked", new Asked("a long answer, please")));
			}
			long deadline = start + TimeUnit.MINUTES.toNanos(2);
			while (count(jdbc, prefix, AiEvents.REPLY_COMPLETED) < n) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(n + " replies did not complete within 2 minutes: "
							+ count(jdbc, prefix, AiEvents.REPLY_COMPLETED) + " completed, "
							+ count(jdbc, prefix, AiEvents.REPLY_DELTA) + " deltas, "
							+ jdbc.sql("SELECT string_agg(type || ':' || c, ', ') FROM (SELECT type, count(*) c FROM a2_event WHERE session_id LIKE ? GROUP BY type) t")
								.param(prefix + "%").query(String.class).single());
				}
				Thread.sleep(20);
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			return new double[] { (double) n * LOAD_TOKENS / seconds, count(jdbc, prefix, AiEvents.REPLY_DELTA) / seconds };
		}
	}

	private static long count(JdbcClient jdbc, String prefix, String type) {
		return jdbc.sql("SELECT count(*) FROM a2_event WHERE contract = 'ai-load' AND session_id LIKE ? AND type = ?")
			.params(prefix + "%", type)
			.query(Long.class)
			.single();
	}

	// --- figures

	private static String rate(double[] figures, int i) {
		return (figures != null) ? String.format(Locale.ROOT, "%,.0f", figures[i]) : "(saturated)";
	}

	private static String ratio(double a, double b) {
		return String.format(Locale.ROOT, "%.2f", a / b);
	}

	private static long percentile(long[] sorted, int p) {
		return sorted[Math.min(sorted.length - 1, sorted.length * p / 100)];
	}

	private static String millis(long nanos) {
		return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
	}

	/**
	 * Streams tokens one every 20 ms, as a model at 50 tokens/s would; a timed model notes when it
	 * emits each token, in {@link #emitted}, under the number the token's text carries.
	 */
	private static final class PacedModel implements ChatModel {

		private final int tokens;

		private final boolean timed;

		PacedModel(int tokens, boolean timed) {
			this.tokens = tokens;
			this.timed = timed;
		}

		@Override
		public ChatResponse call(Prompt prompt) {
			throw new UnsupportedOperationException("streams only");
		}

		@Override
		public Flux<ChatResponse> stream(Prompt prompt) {
			return Flux.interval(TOKEN_DELAY).take(this.tokens).map((i) -> {
				String text;
				if (this.timed) {
					int number = tokenNumbers.getAndIncrement();
					emitted.set(number, System.nanoTime());
					text = "t" + number + " ";
				}
				else {
					text = "token" + i + " ";
				}
				return new ChatResponse(List.of(new Generation(new AssistantMessage(text))));
			});
		}

	}

}
