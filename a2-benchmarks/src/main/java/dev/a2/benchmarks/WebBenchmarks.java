package dev.a2.benchmarks;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToDoubleFunction;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.Session;
import io.netty.channel.ChannelOption;
import reactor.core.Disposable;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A2's endpoints on running instances of one application on the benchmark's database: pushes over
 * HTTP beside a hand-written route on one instance, then, with a second instance listening, the
 * same pushes, pushes beside direct appends in the same server, push-to-delivery latency on a
 * stream of the other instance, and many SSE subscribers.
 */
final class WebBenchmarks {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
	};

	private static final int PUSH_SESSIONS = 100;

	private static final String TEXT = "a message of a typical length for a chat";

	private static final String WEBFLUX_BASELINE = "hand-written WebFlux route, JdbcClient insert in auto-commit";

	private static final String MVC_BASELINE = "hand-written MVC controller, JdbcClient insert in auto-commit";

	private final String jdbcUrl;

	/** The CPU of this JVM and of the benchmark's PostgreSQL, per push. */
	private final ProcessCpu cpu;

	private final AtomicLong sessions = new AtomicLong();

	WebBenchmarks(String jdbcUrl) {
		this.jdbcUrl = jdbcUrl;
		this.cpu = ProcessCpu.of(jdbcUrl);
	}

	void run(Table table) throws Exception {
		System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
		ConnectionProvider connections = ConnectionProvider.builder("bench")
			.maxConnections(2_000)
			.pendingAcquireMaxCount(-1)
			.build();
		try (ConfigurableApplicationContext a = start()) {
			// a single instance sends no notices to others (nobody listens): what one server pays
			pushBesideBaseline(table, port(a), this.cpu,
					System.getProperty("a2.bench.push.connections", "4,16,64,256"), ", one instance", WEBFLUX_BASELINE);
			try (ConfigurableApplicationContext b = start()) {
				runWithTwoInstances(table, a, b, connections);
			}
		}
		finally {
			connections.dispose();
		}
	}

	/**
	 * The same application as a Spring MVC one on Tomcat ({@link MvcBenchApplication}): A2's push through
	 * the servlet the starter mounts, beside an annotated controller doing the same insert.
	 */
	void runMvc(Table table) throws Exception {
		System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
		try (ConfigurableApplicationContext mvc = start(MvcBenchApplication.class, WebApplicationType.SERVLET)) {
			pushBesideBaseline(table, port(mvc), this.cpu, System.getProperty("a2.bench.push.connections.mvc", "4,64"),
					", Spring MVC on Tomcat", MVC_BASELINE);
		}
	}

	private void runWithTwoInstances(Table table, ConfigurableApplicationContext a, ConfigurableApplicationContext b,
			ConnectionProvider connections) throws Exception {
		WebClient clientA = client(a, connections);
		WebClient clientB = client(b, connections);
		A2Server server = a.getBean(A2Server.class);
		// the other instance listens, so every push is told to it as well
		pushBesideBaseline(table, port(a), this.cpu,
				System.getProperty("a2.bench.push.connections.two-instances", "4,64"), ", a second instance listening",
				WEBFLUX_BASELINE);
		table.row("push over HTTP, 1 event per request, keep-alive (events/s) [baseline: session.append in the same server]",
				Benchmarks.compare((stop, w) -> pushes(port(a), "push-" + this.sessions.incrementAndGet(), stop),
						(stop, w) -> appends(server.session("bench", "append-" + this.sessions.incrementAndGet()), stop)));
		table.row("push on instance A to delivery on a stream of instance B, 200 pushes/s (p50 / p99 ms)",
				latency(clientA, clientB));
		table.row("1,000 SSE subscribers on 100 sessions, 4 writers (events delivered/s) [baseline: pushed × 10]",
				fanOut(clientA, clientB));
	}

	/**
	 * A2's push beside the hand-written route ({@link BaselinePush}) in the same server, at each number
	 * of connections: a warm-up of each, then rounds A2, baseline, baseline, A2 (the mean of each side).
	 */
	private static void pushBesideBaseline(Table table, int port, ProcessCpu cpu, String settings, String instances,
			String baselineName) throws Exception {
		int seconds = Integer.getInteger("a2.bench.push.seconds", 10);
		int rounds = Integer.getInteger("a2.bench.push.rounds", 2);
		PushLoad load = new PushLoad(port, PUSH_SESSIONS, cpu);
		System.out.println("  push beside the hand-written route: " + load.tool() + ", " + PUSH_SESSIONS + " sessions, "
				+ seconds + " s runs, " + rounds + " rounds");
		String a2 = "/a2/bench/sessions/%s/events";
		String baseline = BaselinePush.PATH.replace("{session}", "%s");
		for (String setting : settings.split(",")) {
			int connections = Integer.parseInt(setting.trim());
			warmUp(load, connections, a2, baseline);
			List<PushLoad.Result> a2Results = new ArrayList<>();
			List<PushLoad.Result> baselineResults = new ArrayList<>();
			for (int round = 0; round < rounds; round++) {
				boolean a2First = round % 2 == 0;
				(a2First ? a2Results : baselineResults).add(load.run(a2First ? a2 : baseline, connections, seconds));
				(a2First ? baselineResults : a2Results).add(load.run(a2First ? baseline : a2, connections, seconds));
			}
			double a2P50 = mean(a2Results, PushLoad.Result::p50Millis);
			double baselineP50 = mean(baselineResults, PushLoad.Result::p50Millis);
			table.row("push over HTTP (" + load.tool() + "), " + connections + " connections, " + PUSH_SESSIONS
					+ " sessions" + instances + " (pushes/s) [baseline: " + baselineName + "]",
					new double[] { mean(a2Results, PushLoad.Result::rate), mean(baselineResults, PushLoad.Result::rate) });
			table.row("  the same, p50 / p99 latency (ms) [ratio: baseline's p50 over A2's]",
					String.format(Locale.ROOT, "%.2f / %.2f", a2P50, mean(a2Results, PushLoad.Result::p99Millis)),
					String.format(Locale.ROOT, "%.2f / %.2f", baselineP50,
							mean(baselineResults, PushLoad.Result::p99Millis)),
					String.format(Locale.ROOT, "%.2f", baselineP50 / a2P50));
			double a2Cpu = mean(a2Results, (r) -> r.jvmCpuMillis() + r.postgresCpuMillis());
			double baselineCpu = mean(baselineResults, (r) -> r.jvmCpuMillis() + r.postgresCpuMillis());
			table.row("  the same, CPU per push: this JVM + PostgreSQL (ms) [ratio: baseline's over A2's]",
					String.format(Locale.ROOT, "%.3f + %.3f", mean(a2Results, PushLoad.Result::jvmCpuMillis),
							mean(a2Results, PushLoad.Result::postgresCpuMillis)),
					String.format(Locale.ROOT, "%.3f + %.3f", mean(baselineResults, PushLoad.Result::jvmCpuMillis),
							mean(baselineResults, PushLoad.Result::postgresCpuMillis)),
					String.format(Locale.ROOT, "%.2f", baselineCpu / a2Cpu));
		}
		table.row("  load average (1 min) after the push rows, from /proc/loadavg",
				Files.readString(Path.of("/proc/loadavg")).trim());
	}

	/**
	 * Runs both routes in turns until the JIT compiles next to nothing while they run: a server's
	 * steady state, which is what a user's server spends most of its life in. Until then the
	 * compiler takes up to a core of the two here, and more of it for the route with more code to
	 * compile: a fixed warm-up of 5 s each left A2's push measured at about two thirds of its rate
	 * once warm (1,400–2,100 pushes/s in the first 25 s at 4 connections, 2,800 after).
	 */
	private static void warmUp(PushLoad load, int connections, String... routes) throws Exception {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		int seconds = 5;
		for (int turn = 1; turn <= 12; turn++) {
			long compiled = jit.getTotalCompilationTime();
			for (String route : routes) {
				load.run(route, connections, seconds);
			}
			long compiling = jit.getTotalCompilationTime() - compiled;
			// quiet: under a twentieth of the turn's wall-clock time went to compiling
			if (compiling * 20 < routes.length * seconds * 1000L) {
				System.out.println("  warm-up at " + connections + " connections: " + turn + " turn(s) of " + seconds
						+ " s per route, " + compiling + " ms compiling in the last");
				return;
			}
		}
		System.out.println("  warm-up at " + connections + " connections: the JIT was still busy after 12 turns");
	}

	private static double mean(List<PushLoad.Result> results, ToDoubleFunction<PushLoad.Result> figure) {
		return results.stream().mapToDouble(figure).average().orElseThrow();
	}

	private static long pushes(int port, String session, AtomicBoolean stop) throws Exception {
		String body = "{\"events\":[{\"type\":\"tick\",\"payload\":{\"n\":0,\"text\":\"" + TEXT + "\"}}]}";
		long events = 0;
		try (PlainHttpClient client = new PlainHttpClient(port)) {
			while (!stop.get()) {
				int status = client.post("/a2/bench/sessions/" + session + "/events", body);
				if (status != 200) {
					throw new IllegalStateException("a push answered " + status);
				}
				events++;
			}
		}
		return events;
	}

	private static long appends(Session session, AtomicBoolean stop) {
		long events = 0;
		while (!stop.get()) {
			session.append(NewEvent.of("tick", new Benchmarks.Tick(0, TEXT)));
			events++;
		}
		return events;
	}

	private String latency(WebClient pushTo, WebClient streamFrom) {
		int rate = 200;
		int count = rate * 15;
		long[] sent = new long[count + 1];
		long[] latencies = new long[count + 1];
		AtomicLong received = new AtomicLong();
		String session = "latency-" + this.sessions.incrementAndGet();
		Disposable stream = events(streamFrom, session).subscribe((event) -> {
			long now = System.nanoTime();
			for (JsonNode stored : json.readTree(event.data()).get("events")) {
				int n = stored.get("payload").get("n").asInt();
				latencies[n] = now - sent[n];
				received.incrementAndGet();
			}
		});
		try {
			awaitSubscribed(streamFrom);
			long start = System.nanoTime();
			long interval = TimeUnit.SECONDS.toNanos(1) / rate;
			for (int n = 1; n <= count; n++) {
				long due = start + n * interval;
				LockSupport.parkNanos(due - System.nanoTime());
				sent[n] = System.nanoTime();
				push(pushTo, session, n);
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (received.get() < count && System.nanoTime() < deadline) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
		}
		finally {
			stream.dispose();
		}
		long[] measured = Arrays.copyOfRange(latencies, 1, count + 1);
		Arrays.sort(measured);
		return String.format(Locale.ROOT, "%.1f / %.1f (%d of %d delivered)", measured[count / 2] / 1e6,
				measured[count * 99 / 100] / 1e6, received.get(), count);
	}

	private double[] fanOut(WebClient pushTo, WebClient streamFrom) throws Exception {
		int sessionCount = 100;
		int perSession = 10;
		String prefix = "fan-" + this.sessions.incrementAndGet() + "-";
		AtomicLong delivered = new AtomicLong();
		AtomicLong pushed = new AtomicLong();
		List<Disposable> streams = new ArrayList<>();
		for (int s = 0; s < sessionCount; s++) {
			for (int i = 0; i < perSession; i++) {
				streams.add(events(streamFrom, prefix + s).subscribe(
						(event) -> delivered.addAndGet(json.readTree(event.data()).get("events").size())));
			}
		}
		try {
			awaitSubscribed(streamFrom);
			long start = System.nanoTime();
			double pushRate = Benchmarks.rate((stop, w) -> {
				long events = 0;
				while (!stop.get()) {
					push(pushTo, prefix + ThreadLocalRandom.current().nextInt(sessionCount), 0);
					pushed.incrementAndGet();
					events++;
				}
				return events;
			}, 10_000);
			// the last pushes are still on their way: wait for them (or give up after 10 s)
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (delivered.get() < pushed.get() * perSession && System.nanoTime() < deadline) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			return new double[] { delivered.get() / seconds, pushRate * perSession };
		}
		finally {
			streams.forEach(Disposable::dispose);
		}
	}

	private static void awaitSubscribed(WebClient client) {
		// streams subscribe asynchronously; a pause lets their first reads settle before the clock starts
		LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
	}

	private static reactor.core.publisher.Flux<ServerSentEvent<String>> events(WebClient client, String session) {
		return client.get()
			.uri("/a2/bench/sessions/{session}/stream", session)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(SSE)
			.filter((event) -> "events".equals(event.event()));
	}

	private static void push(WebClient client, String session, int n) {
		client.post()
			.uri("/a2/bench/sessions/{session}/events", session)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"tick\",\"payload\":{\"n\":" + n + ",\"text\":\"" + TEXT + "\"}}]}")
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(30));
	}

	private ConfigurableApplicationContext start() {
		return start(BenchApplication.class, WebApplicationType.REACTIVE);
	}

	private ConfigurableApplicationContext start(Class<?> application, WebApplicationType type) {
		return new SpringApplicationBuilder(application).web(type).properties("server.port=0",
				"spring.datasource.url=" + this.jdbcUrl, "spring.datasource.username=postgres",
				"spring.datasource.hikari.maximum-pool-size=24", "a2.store.initialize-schema=never", "spring.main.banner-mode=off")
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private static WebClient client(ConfigurableApplicationContext context, ConnectionProvider connections) {
		int port = port(context);
		return WebClient.builder()
			.baseUrl("http://localhost:" + port)
			.clientConnector(new ReactorClientHttpConnector(
					// without it Nagle holds a request's body until the headers are acknowledged: 40 ms a push
					HttpClient.create(connections).option(ChannelOption.TCP_NODELAY, true)))
			.build();
	}

}
