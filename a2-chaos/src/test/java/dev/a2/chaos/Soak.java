package dev.a2.chaos;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Samples of a long run under steady load: each process's heap (from its actuator) and the
 * database's connections. Memory or connections that keep growing under a steady load are a leak.
 */
final class Soak {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private record Sample(long second, long acknowledged, long pending, long connections, List<Long> heapMb) {
	}

	private final Cluster cluster;

	private final JdbcTemplate jdbc;

	private final Ledger ledger;

	private final long started = System.nanoTime();

	private final List<Sample> samples = new ArrayList<>();

	Soak(Cluster cluster, JdbcTemplate jdbc, Ledger ledger) {
		this.cluster = cluster;
		this.jdbc = jdbc;
		this.ledger = ledger;
		System.out.println("| s | acknowledged | pending work | db connections | heap MB per process |");
		System.out.println("|---|---|---|---|---|");
	}

	void sample() {
		List<Long> heap = new ArrayList<>();
		for (AppProcess process : this.cluster.processes()) {
			heap.add(heapUsed(process) / (1024 * 1024));
		}
		Sample sample = new Sample((System.nanoTime() - this.started) / 1_000_000_000, this.ledger.acknowledgedEvents(),
				Verdict.pendingWork(this.jdbc),
				this.jdbc.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'",
						Long.class),
				heap);
		this.samples.add(sample);
		System.out.printf("| %d | %,d | %,d | %d | %s |%n", sample.second(), sample.acknowledged(), sample.pending(),
				sample.connections(), sample.heapMb());
	}

	/**
	 * After a warm-up quarter, the later half of the samples must not sit higher than the earlier:
	 * the heap's floor (its lowest sample, what a collection leaves) and the connections' peak.
	 * The pending work must not pile up either: the consumers keep up with the load.
	 */
	void assertNoGrowth() {
		List<Sample> steady = this.samples.subList(this.samples.size() / 4, this.samples.size());
		assertThat(steady).as("samples after the warm-up").hasSizeGreaterThanOrEqualTo(4);
		List<Sample> early = steady.subList(0, steady.size() / 2);
		List<Sample> late = steady.subList(steady.size() / 2, steady.size());
		for (int p = 0; p < this.cluster.processes().size(); p++) {
			int process = p;
			long earlyFloor = early.stream().mapToLong((s) -> s.heapMb().get(process)).filter((mb) -> mb >= 0).min().orElseThrow();
			long lateFloor = late.stream().mapToLong((s) -> s.heapMb().get(process)).filter((mb) -> mb >= 0).min().orElseThrow();
			assertThat(lateFloor).as("heap floor (MB) of process " + p + ", later half against earlier half")
				.isLessThanOrEqualTo(earlyFloor + Math.max(16, earlyFloor / 4));
		}
		long earlyPeak = early.stream().mapToLong(Sample::connections).max().orElseThrow();
		long latePeak = late.stream().mapToLong(Sample::connections).max().orElseThrow();
		assertThat(latePeak).as("database connections, later half against earlier half")
			.isLessThanOrEqualTo(earlyPeak + this.cluster.processes().size());
		long earlyPending = early.stream().mapToLong(Sample::pending).max().orElseThrow();
		long latePending = late.stream().mapToLong(Sample::pending).max().orElseThrow();
		assertThat(latePending).as("pending consumer work, later half against earlier half")
			.isLessThanOrEqualTo(Math.max(2 * earlyPending, 1000));
	}

	private static long heapUsed(AppProcess process) {
		try {
			HttpResponse<String> response = http.send(
					HttpRequest.newBuilder(process.uri("/actuator/metrics/jvm.memory.used?tag=area:heap"))
						.timeout(Duration.ofSeconds(5))
						.build(),
					HttpResponse.BodyHandlers.ofString());
			return json.readTree(response.body()).get("measurements").get(0).get("value").asLong();
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

}
