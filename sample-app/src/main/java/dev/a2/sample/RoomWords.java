package dev.a2.sample;

import java.util.List;

import dev.a2.ConsumerContext;
import dev.a2.Event;
import dev.a2.Session;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.spring.A2Consumer;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * A projection: how many words each room's messages hold, kept in the sample's own table. It is a
 * fixed lane with backfill, so it reads every room's log in order from the first event, also rooms
 * written before it was deployed. A run may be repeated after a crash, so the update is keyed by
 * the event's index and counts each message once. A clear starts the room over: the count keeps the
 * clear index of its messages and starts again at the first message after a clear.
 */
@Component
class RoomWords {

	private static final String COUNT = """
			INSERT INTO sample_room_words (room, words, through, cleared) VALUES (:room, :words, :index, :cleared)
			ON CONFLICT (room) DO UPDATE
			SET words = CASE WHEN excluded.cleared > sample_room_words.cleared THEN excluded.words
			                 ELSE sample_room_words.words + excluded.words END,
			    through = excluded.through, cleared = excluded.cleared
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
			.param("cleared", context.event().clearIndex())
			.update();
	}

	/**
	 * The words of the room's messages since its latest clear. A clear writes no message, so a count of
	 * the clears before it holds only until the room's first event after the clear shows it was cleared.
	 */
	long words(Session room) {
		List<Event> first = room.history(0, 1).events();
		if (first.isEmpty()) {
			return 0;   // nothing since the latest clear, or never written
		}
		return this.jdbc.sql("SELECT words FROM sample_room_words WHERE room = :room AND cleared = :cleared")
			.param("room", room.id())
			.param("cleared", first.get(0).clearIndex())
			.query(Long.class)
			.optional()
			.orElse(0L);
	}

}
