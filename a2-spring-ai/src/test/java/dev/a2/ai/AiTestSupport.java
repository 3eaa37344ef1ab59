package dev.a2.ai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.DrainSettings;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.ServerFaults;
import dev.a2.Session;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.store.postgres.PostgresSessionChanges;
import dev.a2.test.MutableClock;
import dev.a2.test.TestPostgres;

import static org.awaitility.Awaitility.await;

/** Servers on a fresh schema of the test PostgreSQL, sharing a clock the tests move. */
final class AiTestSupport implements AutoCloseable {

	/** Long enough that no real-time heartbeat renews or loses a claim while a test runs: the clock takes leases. */
	static final Duration LEASE = Duration.ofHours(1);

	public record MessageSent(String text) {
	}

	public record StopRequested(String by) {
	}

	final HikariDataSource dataSource;

	final MutableClock clock = new MutableClock();

	private final List<A2Server> servers = new ArrayList<>();

	private final List<PostgresSessionChanges> changes = new ArrayList<>();

	AiTestSupport(String owner) {
		this.dataSource = TestPostgres.newSchemaDataSource(owner, 20);
		PostgresSchema.migrate(this.dataSource);
	}

	static Contract chat() {
		Contract.Builder chat = Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.event("stop.requested", StopRequested.class);
		AiEvents.register(chat, (event) -> event.type().equals("message.sent") ? event.payload(MessageSent.class).text() : null);
		return chat.build();
	}

	/** An instance: its own LISTEN connection, so it hears of other instances' appends (a stop) at once. */
	A2Server server(Consumer... consumers) {
		return server(Duration.ofSeconds(60), consumers);
	}

	/** An instance whose presence writes last {@code presenceTtl} of the clock. */
	A2Server server(Duration presenceTtl, Consumer... consumers) {
		PostgresSessionChanges changes = new PostgresSessionChanges(this.dataSource);
		this.changes.add(changes);
		await().atMost(Duration.ofSeconds(20)).until(changes::connected);
		A2Server.Builder builder = A2Server.builder()
			.sessionChanges(changes)
			.dataSource(this.dataSource)
			.contract(chat())
			.clock(this.clock)
			.drain(DrainSettings.DEFAULTS.withLease(LEASE))
			.stopGrace(Duration.ofSeconds(5))
			.presenceTtl(presenceTtl);
		for (Consumer consumer : consumers) {
			builder.consumer(consumer);
		}
		A2Server server = builder.build();
		this.servers.add(server);
		return server;
	}

	/** Lets every claim lapse, as when the instance holding it died. */
	void leasesLapse() {
		this.clock.advance(LEASE.plusSeconds(1));
	}

	/**
	 * The assistant as docs/ai-replies.md wires it: one run at a time per session, aborted by a Stop,
	 * and run for a Stop too, which ends a reply that waits for approval.
	 */
	static Consumer stoppable(Assistant assistant) {
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		return Consumer.builder("chat", "assistant")
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED, "stop.requested")
			.lane(Lane.keyed((input) -> input.session()))
			.abortOn("stop.requested")
			.run((context) -> {
				replies.converse(context, assistant);
				return null;
			});
	}

	static void halt(A2Server server) {
		ServerFaults.halt(server);
	}

	/** Every event of the session, in order. */
	static List<Event> events(Session session) {
		return session.history(0, 1000).events();
	}

	static List<Event> ofType(Session session, String type) {
		return events(session).stream().filter((event) -> event.type().equals(type)).toList();
	}

	static List<String> types(Session session) {
		return events(session).stream().map(Event::type).toList();
	}

	/** The reply's text as a reader folds it: the conversation's turn of the message at {@code replyTo}. */
	static String storedReply(Session session, long replyTo) {
		Conversation.Turn turn = ((Conversation) session.state(AiEvents.CONVERSATION).state()).reply(replyTo);
		return (turn != null) ? turn.text() : "";
	}

	@Override
	public void close() {
		for (A2Server server : this.servers) {
			halt(server);
		}
		this.changes.forEach(PostgresSessionChanges::close);
		this.dataSource.close();
	}

}
