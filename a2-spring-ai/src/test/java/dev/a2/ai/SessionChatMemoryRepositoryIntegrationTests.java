package dev.a2.ai;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.ScriptedModel.Script;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.prompt.Prompt;

import static dev.a2.ai.AiTestSupport.events;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/** Spring AI chat memory on a session's log: one log for what the model is sent and what browsers see. */
class SessionChatMemoryRepositoryIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("memory");

	private A2Server server;

	private SessionChatMemoryRepository memory;

	@BeforeEach
	void start() {
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "Hello ", "Ann."));
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		this.server = this.support.server(Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.stream(context, model.stream(new Prompt(ReplyStream.conversation(context))));
			return null;
		}));
		this.memory = new SessionChatMemoryRepository(this.server, "chat");
	}

	@AfterEach
	void close() {
		this.support.close();
	}

	@Test
	void theMemoryIsTheSessionsConversationAndSavingAppendsOnlyWhatIsNew() {
		Session session = this.server.session("chat", "round-trip");
		session.append(NewEvent.of("message.sent", new MessageSent("Hi, I am Ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		List<Message> stored = this.memory.findByConversationId("round-trip");
		assertThat(stored).containsExactly(new UserMessage("Hi, I am Ann"), new AssistantMessage("Hello Ann."));

		List<Message> next = new ArrayList<>(stored);
		next.add(new UserMessage("What is my name?"));
		next.add(new AssistantMessage("Ann."));
		int before = events(session).size();
		this.memory.saveAll("round-trip", next);
		assertThat(events(session)).hasSize(before + 2);
		assertThat(this.memory.findByConversationId("round-trip")).containsExactlyElementsOf(next);

		this.memory.saveAll("round-trip", next);
		assertThat(events(session)).as("saving the same again appends nothing").hasSize(before + 2);
	}

	@Test
	void saveAllRefusesToRewriteHistoryAndWritesNothing() {
		this.memory.saveAll("rewrite", List.of(new UserMessage("one"), new AssistantMessage("two")));
		Session session = this.server.session("chat", "rewrite");
		int before = events(session).size();

		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.memory.saveAll("rewrite",
					List.of(new UserMessage("one, edited"), new AssistantMessage("two"), new UserMessage("three"))))
			.withMessageContaining("would rewrite conversation 'rewrite'")
			.withMessageContaining("deleteByConversationId");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.memory.saveAll("rewrite",
					List.of(new UserMessage("one"), new AssistantMessage("two, edited"), new UserMessage("three"))));
		assertThatIllegalArgumentException().isThrownBy(() -> this.memory.saveAll("rewrite", List.of()));
		assertThat(events(session)).hasSize(before);
		assertThat(this.memory.findByConversationId("rewrite")).containsExactly(new UserMessage("one"), new AssistantMessage("two"));
	}

	@Test
	void aSaveRacingTheSameSaveOnAnotherInstanceStoresItsMessagesOnce() throws Exception {
		this.memory.saveAll("retried", List.of(new UserMessage("one"), new AssistantMessage("two")));
		SessionChatMemoryRepository other = new SessionChatMemoryRepository(this.support.server(), "chat");
		List<Message> next = List.of(new UserMessage("one"), new AssistantMessage("two"), new UserMessage("three"));
		ExecutorService saves = Executors.newFixedThreadPool(2);
		try (Connection locker = this.support.dataSource.getConnection()) {
			// the session's row held, both saves read the same conversation and wait to append
			locker.setAutoCommit(false);
			locker.createStatement()
				.execute("SELECT 1 FROM a2_session WHERE contract = 'chat' AND session_id = 'retried' FOR UPDATE");
			Future<?> first = saves.submit(() -> this.memory.saveAll("retried", next));
			Future<?> second = saves.submit(() -> other.saveAll("retried", next));
			await().atMost(Duration.ofSeconds(20)).until(() -> blockedBy(locker) == 2);
			locker.commit();
			first.get(20, TimeUnit.SECONDS);
			second.get(20, TimeUnit.SECONDS);
		}
		finally {
			saves.shutdownNow();
		}
		assertThat(this.memory.findByConversationId("retried")).containsExactlyElementsOf(next);
		assertThat(types(this.server.session("chat", "retried"))).containsExactly(AiEvents.MEMORY_MESSAGE,
				AiEvents.MEMORY_MESSAGE, AiEvents.MEMORY_MESSAGE);

		// after a clear the same messages are new again: their ids must not meet those of before
		this.memory.deleteByConversationId("retried");
		this.memory.saveAll("retried", next);
		assertThat(this.memory.findByConversationId("retried")).containsExactlyElementsOf(next);
	}

	/**
	 * How many statements wait for a lock {@code connection} holds, or behind one that does (the second
	 * to want a row waits for the first).
	 */
	private static int blockedBy(Connection connection) throws SQLException {
		try (ResultSet rs = connection.createStatement().executeQuery("""
				SELECT count(*) FROM pg_stat_activity a
				WHERE pg_backend_pid() = ANY (pg_blocking_pids(a.pid))
				   OR EXISTS (SELECT 1 FROM pg_stat_activity b
				              WHERE b.pid = ANY (pg_blocking_pids(a.pid)) AND pg_backend_pid() = ANY (pg_blocking_pids(b.pid)))""")) {
			rs.next();
			return rs.getInt(1);
		}
	}

	@Test
	void springAisWindowedChatMemoryAppendsToTheLogInsteadOfRewritingIt() {
		MessageWindowChatMemory window = MessageWindowChatMemory.builder().chatMemoryRepository(this.memory).maxMessages(3).build();
		window.add("window", new SystemMessage("Be brief."));
		for (int i = 1; i <= 3; i++) {
			window.add("window", List.of(new UserMessage("question " + i), new AssistantMessage("answer " + i)));
		}
		assertThat(this.memory.findByConversationId("window")).as("the log keeps all, the window only trims what it saves")
			.hasSize(7)
			.endsWith(new UserMessage("question 3"), new AssistantMessage("answer 3"));

		this.memory.deleteByConversationId("window");
		assertThat(this.memory.findByConversationId("window")).isEmpty();
	}

}
