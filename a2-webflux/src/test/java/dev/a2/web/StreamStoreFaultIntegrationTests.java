package dev.a2.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.a2.test.AtOnce;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An SSE stream whose session can no longer be read ends as a whole response. It once failed after its
 * 200 had been sent: the response was left unterminated (a broken transfer to the client) and the
 * framework logged two stack traces at ERROR for every stream (found by the observability trial).
 */
class StreamStoreFaultIntegrationTests {

	/**
	 * Instance A reads as a role row security applies to; instance B, which pushes, as the database's
	 * superuser, which it does not. The policy makes A's reads of the session's second event fail (as a
	 * fault of that row would). A's stream sends the state through the first event, then reads the
	 * second, and fails.
	 */
	@Test
	void aStreamWhoseSessionCanNoLongerBeReadEndsWithACommentAndAWholeResponse() throws Exception {
		try (Instances instances = new Instances("stream_fault")) {
			String schema = instances.schema();
			ReadFaults.allowFaultyRole(schema);
			ConfigurableApplicationContext a = instances.start(ChatApplication.class, ReadFaults.READ_AS_FAULTY_ROLE);
			ConfigurableApplicationContext b = instances.start(ChatApplication.class);
			WebClient pushes = WebCalls.client(b);
			WebCalls.push(pushes, "broken", "readable");
			WebCalls.push(pushes, "broken", "unreadable");
			failReadsFromTheSecondEvent(schema, "broken");

			HttpResponse<Stream<String>> response = stream(a, "/a2/chat/sessions/broken/stream?after=1&state=summary");
			assertThat(response.statusCode()).isEqualTo(200);
			List<String> lines = new CopyOnWriteArrayList<>();
			// the whole body, read until the server ends it: a response cut short throws here
			CompletableFuture.runAsync(() -> response.body().forEach(lines::add), AtOnce.threads()).get(60, TimeUnit.SECONDS);
			assertThat(lines).anySatisfy((line) -> assertThat(line).startsWith("event:state"));
			assertThat(lines).anySatisfy((line) -> assertThat(line)
				.startsWith(":session 'broken' could not be read (INTERNAL)")
				.endsWith(": reconnect to resume"));
			assertThat(lines).noneMatch((line) -> line.contains("unreadable"));
		}
	}

	/**
	 * A stream that has caught up and waits at the head, when its session's reads begin to fail (as in an
	 * outage: the next change or poll cannot read it). It heard nothing: the feed's failed read left the
	 * subscriber at the head it had read, so it was answered "nothing new", and a page said "live" while
	 * PostgreSQL was down (found by a trial of a collaborative list). It ends now, as PROTOCOL.md says.
	 */
	@Test
	void aLiveStreamAtTheHeadEndsWhenItsSessionsReadsBeginToFail() throws Exception {
		try (Instances instances = new Instances("live_fault")) {
			String schema = instances.schema();
			ReadFaults.allowFaultyRole(schema);
			ConfigurableApplicationContext a = instances.start(ChatApplication.class, ReadFaults.READ_AS_FAULTY_ROLE);
			ConfigurableApplicationContext b = instances.start(ChatApplication.class);
			WebClient pushes = WebCalls.client(b);
			WebCalls.push(pushes, "outage", "readable");

			HttpResponse<Stream<String>> response = stream(a, "/a2/chat/sessions/outage/stream?after=0");
			assertThat(response.statusCode()).isEqualTo(200);
			List<String> lines = new CopyOnWriteArrayList<>();
			CompletableFuture<Void> whole = CompletableFuture.runAsync(() -> response.body().forEach(lines::add),
					AtOnce.threads());
			// caught up: the first event came, and the stream waits at the head
			await().atMost(Duration.ofSeconds(30))
				.until(() -> lines.stream().anyMatch((line) -> line.startsWith("data:") && line.contains("readable")));

			failReadsFromTheSecondEvent(schema, "outage");
			WebCalls.push(pushes, "outage", "unreadable");

			// the whole body, read until the server ends it
			whole.get(60, TimeUnit.SECONDS);
			assertThat(lines).anySatisfy((line) -> assertThat(line)
				.startsWith(":session 'outage' could not be read (")
				.endsWith(": reconnect to resume"));
			assertThat(lines).noneMatch((line) -> line.contains("unreadable"));
		}
	}

	/**
	 * A stream whose session cannot be read at all (as while PostgreSQL is unreachable: the pool waits for
	 * a connection longer than a ping) is answered with the error, as any request. Its pings began the
	 * answer first: 200, pings, then the error as a comment.
	 */
	@Test
	void aStreamWhoseFirstReadFailsSlowlyIsAnsweredWithTheErrorNotA200() throws Exception {
		try (Instances instances = new Instances("stream_unopened")) {
			String schema = instances.schema();
			ReadFaults.allowFaultyRole(schema);
			ConfigurableApplicationContext a = instances.start(ChatApplication.class, ReadFaults.READ_AS_FAULTY_ROLE,
					"a2.web.ping=100ms");
			ConfigurableApplicationContext b = instances.start(ChatApplication.class);
			WebClient writes = WebCalls.client(b);
			WebCalls.push(writes, "unopened", "unreadable");
			// a presence row too, so that reading the session's presence fails as every read does in an outage
			WebCalls.typing(writes, "unopened", "ann");
			ReadFaults.failReadsOf(schema, "unopened", "PERFORM pg_sleep(1);");

			HttpResponse<String> response = HttpClient.newHttpClient()
				.sendAsync(HttpRequest.newBuilder(URI.create("http://localhost:" + Instances.port(a)
						+ "/a2/chat/sessions/unopened/stream"))
					.header("Accept", "text/event-stream")
					.build(), HttpResponse.BodyHandlers.ofString())
				.get(60, TimeUnit.SECONDS);
			assertThat(response.statusCode()).as("the status, with %s", response.body()).isEqualTo(500);
			assertThat(response.body()).contains("\"INTERNAL\"").doesNotContain("ping");
		}
	}

	/** Row security makes the reads of the session's events from its second on fail, as a fault of those rows would. */
	private static void failReadsFromTheSecondEvent(String schema, String session) throws Exception {
		ReadFaults.admin("""
				CREATE FUNCTION SCHEMA.readable(session text, idx bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
				BEGIN
				    IF session = 'SESSION' AND idx >= 2 THEN
				        RAISE EXCEPTION 'event % of session % cannot be read', idx, session;
				    END IF;
				    RETURN true;
				END $f$""".replace("SCHEMA", schema).replace("SESSION", session),
				"ALTER TABLE " + schema + ".a2_event ENABLE ROW LEVEL SECURITY",
				"ALTER TABLE " + schema + ".a2_event FORCE ROW LEVEL SECURITY",
				"CREATE POLICY reads ON " + schema + ".a2_event FOR SELECT USING (" + schema + ".readable(session_id, idx))");
	}

	/** An SSE stream of the instance, its lines read as they come. */
	private static HttpResponse<Stream<String>> stream(ConfigurableApplicationContext instance, String path) throws Exception {
		return HttpClient.newHttpClient()
			.sendAsync(HttpRequest.newBuilder(URI.create("http://localhost:" + Instances.port(instance) + path))
				.header("Accept", "text/event-stream")
				.build(), HttpResponse.BodyHandlers.ofLines())
			.get(30, TimeUnit.SECONDS);
	}

}
