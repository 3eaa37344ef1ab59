package dev.a2.sample;

import dev.a2.ConsumerContext;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.spring.A2Consumer;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * A projection: how many words each room's messages hold, kept in the sample's own table. It is a
 * fixed lane with backfill, so it reads every room's log in order from the first event, also rooms
 * written before it was deployed. A run may be repeated after a crash, so the update is keyed by
 * the event's index and counts each message once.
 */
@Component
class RoomWords {

	private static final String COUNT = """
			INSERT INTO sample_room_words (room, words, through) VALUES (:room, :words, :index)
			ON CONFLICT (room) DO UPDATE SET words = sample_room_words.words + excluded.words, through = excluded.through
			WHERE sample_room_words.through < excluded.through""";

	private final JdbcClient jdbc;

	RoomWords(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	@A2Consumer(contract = "chat", name = "word-count", types = "message.sent", lane = "word-count", backfill = true)
	void count(MessageSent message, ConsumerContext context) {
		this.jdbc.sql(COUNT)
			.param("room", context.session().id())
			.param("words", message.text().trim().split("\\s+").length)
			.param("index", context.event().index())
			.update();
	}

	long words(String room) {
		return this.jdbc.sql("SELECT words FROM sample_room_words WHERE room = :room")
			.param("room", room)
			.query(Long.class)
			.optional()
			.orElse(0L);
	}

}
