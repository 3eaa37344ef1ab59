package dev.a2.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pushes of one event per request over keep-alive connections, from {@code wrk} as a process of its
 * own when the machine has it (Debian's package {@code wrk}), else from {@link PlainHttpClient}
 * threads in this JVM. Each request goes to the next of {@code sessions} sessions and carries an event
 * id of its own, so no push is an idempotent replay.
 */
final class PushLoad {

	/** The body of today's web benchmark, with an id per event. */
	static final String BODY = "{\"events\":[{\"id\":\"%s\",\"type\":\"tick\",\"payload\":{\"n\":%d,\"text\":\"a message of a typical length for a chat\"}}]}";

	private static final String SCRIPT = """
			-- args: id prefix, path with %d for the session's number, sessions, threads
			local counter = 0
			local prefix, path, sessions, threads
			local next_tid = 0
			function setup(thread)
				next_tid = next_tid + 1
				thread:set("tid", next_tid)
			end
			function init(args)
				prefix = args[1]
				path = args[2]
				sessions = tonumber(args[3])
				threads = tonumber(args[4])
				wrk.method = "POST"
				wrk.headers["Content-Type"] = "application/json"
			end
			function request()
				counter = counter + 1
				-- threads take turns over the sessions, so that consecutive pushes land on different ones
				local session = (counter * threads + tid) % sessions
				local id = prefix .. "-" .. tid .. "-" .. counter
				local body = string.format('BODY', id, counter)
				return wrk.format(nil, string.format(path, session), nil, body)
			end
			function done(summary, latency, requests)
				io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d status=%d connect=%d read=%d write=%d timeout=%d\\n",
					summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
					summary.errors.status, summary.errors.connect, summary.errors.read, summary.errors.write,
					summary.errors.timeout))
			end
			""".replace("BODY", BODY.replace("\"", "\\\""));

	private static final Pattern RESULT = Pattern.compile(
			"RESULT requests=(\\d+) duration_us=(\\d+) p50_us=(\\d+) p99_us=(\\d+) status=(\\d+) connect=(\\d+) read=(\\d+) write=(\\d+) timeout=(\\d+)");

	private static final int WRK_THREADS = 2;

	/**
	 * Pushes per second and latency percentiles of one run, and the CPU each push took in this JVM
	 * (both servers and, without wrk, the client) and in PostgreSQL's processes.
	 */
	record Result(double rate, double p50Millis, double p99Millis, double jvmCpuMillis, double postgresCpuMillis) {
	}

	private final int port;

	private final int sessions;

	/** {@code null} when the machine has no wrk. */
	private final Path wrk;

	private final Path script;

	private final ProcessCpu cpu;

	private int runs;

	PushLoad(int port, int sessions, ProcessCpu cpu) throws IOException {
		this.port = port;
		this.cpu = cpu;
		this.sessions = sessions;
		Path wrk = Path.of(System.getProperty("a2.bench.wrk", "/usr/bin/wrk"));
		this.wrk = Files.isExecutable(wrk) ? wrk : null;
		this.script = Files.createTempFile("a2-push", ".lua");
		Files.writeString(this.script, SCRIPT);
		this.script.toFile().deleteOnExit();
	}

	/** Who sends the load, as the benchmark's table says it. */
	String tool() {
		return (this.wrk != null) ? "wrk, " + WRK_THREADS + " threads" : "wrk not found: PlainHttpClient threads in the benchmark's JVM";
	}

	/**
	 * Pushes to {@code pathTemplate} (the session's name at {@code %s}) for {@code seconds} over
	 * {@code connections} connections.
	 */
	Result run(String pathTemplate, int connections, int seconds) throws Exception {
		String prefix = "r" + (++this.runs) + "x" + Long.toString(System.nanoTime() & 0xffffffL, 36);
		String path = String.format(pathTemplate, prefix + "-%d");
		ProcessCpu.Sample before = this.cpu.now();
		Result result = (this.wrk != null) ? wrk(path, prefix, connections, seconds)
				: plain(path, prefix, connections, seconds);
		ProcessCpu.Sample perPush = this.cpu.now().since(before, result.rate() * seconds);
		return new Result(result.rate(), result.p50Millis(), result.p99Millis(), perPush.jvmMillis(),
				perPush.postgresMillis());
	}

	private Result wrk(String path, String prefix, int connections, int seconds) throws Exception {
		Process process = new ProcessBuilder(this.wrk.toString(), "-t" + Math.min(WRK_THREADS, connections),
				"-c" + connections, "-d" + seconds + "s", "--timeout", "10s", "-s", this.script.toString(),
				"http://127.0.0.1:" + this.port, "--", prefix, path, String.valueOf(this.sessions),
				String.valueOf(Math.min(WRK_THREADS, connections)))
			.redirectErrorStream(true)
			.start();
		String output;
		try (InputStream in = process.getInputStream()) {
			output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		if (!process.waitFor(seconds + 30L, TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroy();
			throw new IllegalStateException("wrk failed:\n" + output);
		}
		Matcher result = RESULT.matcher(output);
		if (!result.find()) {
			throw new IllegalStateException("wrk printed no result:\n" + output);
		}
		long errors = 0;
		for (int group = 5; group <= 9; group++) {
			errors += Long.parseLong(result.group(group));
		}
		if (errors > 0) {
			throw new IllegalStateException(errors + " pushes failed (non-2xx or socket errors):\n" + output);
		}
		double elapsed = Long.parseLong(result.group(2)) / 1e6;
		return new Result(Long.parseLong(result.group(1)) / elapsed, Long.parseLong(result.group(3)) / 1e3,
				Long.parseLong(result.group(4)) / 1e3, 0, 0);
	}

	private Result plain(String path, String prefix, int connections, int seconds) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(connections);
		try {
			AtomicBoolean stop = new AtomicBoolean();
			List<Future<long[]>> clients = new ArrayList<>();
			for (int c = 0; c < connections; c++) {
				int client = c;
				clients.add(executor.submit(() -> {
					long[] latencies = new long[1024];
					int count = 0;
					try (PlainHttpClient http = new PlainHttpClient(this.port)) {
						while (!stop.get()) {
							int session = (count * connections + client) % this.sessions;
							String id = prefix + "-" + client + "-" + count;
							long start = System.nanoTime();
							int status = http.post(String.format(path, session), String.format(BODY, id, count));
							if (status != 200) {
								throw new IllegalStateException("a push answered " + status);
							}
							if (count == latencies.length) {
								latencies = Arrays.copyOf(latencies, count * 2);
							}
							latencies[count++] = System.nanoTime() - start;
						}
					}
					return Arrays.copyOf(latencies, count);
				}));
			}
			long start = System.nanoTime();
			Thread.sleep(seconds * 1000L);
			stop.set(true);
			long[] all = new long[0];
			for (Future<long[]> client : clients) {
				long[] latencies = client.get();
				int from = all.length;
				all = Arrays.copyOf(all, from + latencies.length);
				System.arraycopy(latencies, 0, all, from, latencies.length);
			}
			double elapsed = (System.nanoTime() - start) / 1e9;
			Arrays.sort(all);
			return new Result(all.length / elapsed, all[all.length / 2] / 1e6, all[all.length * 99 / 100] / 1e6, 0, 0);
		}
		finally {
			executor.shutdownNow();
		}
	}

}
