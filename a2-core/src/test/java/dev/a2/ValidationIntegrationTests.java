package dev.a2;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.a2.TestContracts.Item;
import dev.a2.TestContracts.OrderPlaced;
import dev.a2.test.PostgresExtension;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every kind of bad input of §4 gets {@code INVALID_PAYLOAD} with a message that names what is
 * wrong, and stores nothing: the session's other events of the batch are not appended either.
 */
@ExtendWith(PostgresExtension.class)
class ValidationIntegrationTests {

	private final DataSource dataSource;

	private final A2Server a2;

	private final Session session;

	ValidationIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
		this.a2 = A2TestSupport.server(dataSource).build();
		this.session = this.a2.session("chat", A2TestSupport.newSessionId());
	}

	@Test
	void emptyBatch() {
		assertRejected(() -> this.session.append(List.of()), "events must be a non-empty list");
	}

	@Test
	void tooManyEvents() {
		List<NewEvent> events = Collections.nCopies(A2Server.MAX_EVENTS_PER_APPEND + 1, message("x"));
		assertRejected(() -> this.session.append(events), "one append takes at most 1000");
	}

	@Test
	void missingOrUnknownType() {
		assertRejected(() -> this.session.append(message("ok"), new NewEvent(null, Map.of(), null)),
				"events[1].type must be a non-empty string");
		assertRejected(() -> this.session.append(message("ok"), new NewEvent("", Map.of(), null)),
				"events[1].type must be a non-empty string");
		assertRejected(() -> this.session.append(message("ok"), NewEvent.of("message.deleted", Map.of())),
				"events[1].type 'message.deleted' is not an event type of contract 'chat'");
		assertRejected(() -> this.session.append(NewEvent.of("a2.cleared", Map.of())),
				"events[0].type 'a2.cleared' is not an event type");
	}

	@Test
	void idOfWrongLength() {
		assertRejected(() -> this.session.append(message("ok"), message("bad", "")), "events[1].id must be 1-256 characters");
		assertRejected(() -> this.session.append(message("bad", "x".repeat(257))), "events[0].id must be 1-256 characters, was 257");
		assertThat(this.session.append(message("ok", "x".repeat(256))).get(0).id()).hasSize(256);
	}

	@Test
	void idShapedLikeADerivedId() {
		String derived = DerivedIds.returnedEvent("evt", 0, "assistant");
		assertRejected(() -> this.session.append(message("ok"), message("bad", derived)),
				"events[1].id is shaped like a UUIDv5");
	}

	@Test
	void idRepeatedWithinTheBatch() {
		assertRejected(() -> this.session.append(message("a", "same"), message("b", "other"), message("c", "same")),
				"events[2].id repeats the id of events[0]");
	}

	@Test
	void payloadThatDoesNotBindNamesThePath() {
		Map<String, Object> wrongShape = Map.of("items", List.of(Map.of("sku", "a", "price", 1), Map.of("sku", "b", "price", "cheap")));
		assertRejected(() -> this.session.append(message("ok"), NewEvent.of("order.placed", wrongShape)),
				"events[1].payload.items[1].price");
		// the type by its simple name: the server's packages are nothing a client acts on
		assertThatThrownBy(() -> this.session.append(NewEvent.of("order.placed", wrongShape)))
			.hasMessageContaining("`BigDecimal`")
			.hasMessageNotContaining("java.math");
		assertRejected(() -> this.session.append(NewEvent.of("message.sent", List.of(1, 2))), "events[0].payload");
		assertRejected(() -> this.session.append(NewEvent.of("message.sent",
				JsonMapper.builder().build().readTree("{\"text\":{\"nested\":true}}"))), "events[0].payload.text");
	}

	/** A payload type that takes any value, so that one Jackson cannot write can be given. */
	public record Blob(Object data) {
	}

	@Test
	void payloadThatJacksonCannotWriteIsInvalidAndStoresNothing() {
		A2Server blobs = A2TestSupport.server(this.dataSource)
			.contract(Contract.builder("blobs").event("blob", Blob.class).build())
			.build();
		Session session = blobs.session("blobs", this.session.id());
		List<Object> deep = new ArrayList<>();
		List<Object> innermost = deep;
		for (int depth = 0; depth < 1000; depth++) {
			List<Object> inner = new ArrayList<>();
			innermost.add(inner);
			innermost = inner;
		}
		assertRejected(() -> session.append(NewEvent.of("blob", new Blob(deep))),
				"events[0].payload cannot be written as JSON: Document nesting depth");
	}

	/** A payload type with whole numbers, as an order's quantity and its amount in cents are. */
	public record Line(String sku, int quantity, long amountCents) {
	}

	@Test
	void aNumberWithAFractionWhereAWholeNumberGoesIsInvalidAndStoresNothing() {
		A2Server shop = A2TestSupport.server(this.dataSource)
			.contract(Contract.builder("shop").event("line.added", Line.class).build())
			.build();
		Session session = shop.session("shop", this.session.id());
		JsonMapper json = JsonMapper.builder().build();
		// a pushed payload (a JSON tree) and one given as a map: 19.99 was stored as 19 cents, 1.5 as 1
		assertRejected(() -> session.append(NewEvent.of("line.added",
				json.readTree("{\"sku\":\"a\",\"quantity\":1,\"amountCents\":19.99}"))), "events[0].payload.amountCents");
		assertRejected(() -> session.append(NewEvent.of("line.added", Map.of("sku", "a", "quantity", 1.5, "amountCents", 100))),
				"events[0].payload.quantity");
		assertThatThrownBy(() -> session.append(NewEvent.of("line.added", Map.of("sku", "a", "quantity", 1.5, "amountCents", 100))))
			.hasMessage("events[0].payload.quantity: Cannot coerce Floating-point value (1.5) to `int` value");
		// a null where a number must be: Jackson's advice to the server's author ("set DeserializationFeature…
		// to allow") told a client nothing it could act on
		assertThatThrownBy(() -> session.append(NewEvent.of("line.added",
				json.readTree("{\"sku\":\"a\",\"quantity\":null,\"amountCents\":100}"))))
			.hasMessage("events[0].payload.quantity: Cannot map `null` into type `int`");
		assertThat(session.append(NewEvent.of("line.added", json.readTree("{\"sku\":\"a\",\"quantity\":2,\"amountCents\":1999}")))
			.get(0)
			.payload(Line.class)).isEqualTo(new Line("a", 2, 1999));
	}

	@Test
	void missingPayload() {
		assertRejected(() -> this.session.append(new NewEvent("message.sent", null, null)),
				"events[0].payload is required");
	}

	@Test
	void payloadThatBreaksItsConstraintsNamesThePath() {
		assertRejected(() -> this.session.append(message("ok"), message(" ")), "events[1].payload.text: must not be blank");
		OrderPlaced badItem = new OrderPlaced(List.of(new Item("a", BigDecimal.ONE), new Item("b", BigDecimal.valueOf(-5))));
		assertRejected(() -> this.session.append(NewEvent.of("order.placed", badItem)),
				"events[0].payload.items[1].price: must be greater than 0");
		assertRejected(() -> this.session.append(NewEvent.of("order.placed", new OrderPlaced(new ArrayList<>()))),
				"events[0].payload.items: must not be empty");
		// every violation, not the first alone: a form shows them all at once
		OrderPlaced twoBad = new OrderPlaced(List.of(new Item(" ", BigDecimal.ONE), new Item("b", BigDecimal.valueOf(-5))));
		assertThatThrownBy(() -> this.session.append(NewEvent.of("order.placed", twoBad))).isInstanceOf(A2Exception.class)
			.hasMessage("events[0].payload.items[0].sku: must not be blank; events[0].payload.items[1].price: must be greater than 0");
	}

	@Test
	void withoutAValidatorConstraintsAreNotEnforced() {
		A2Server lenient = A2Server.builder().dataSource(this.dataSource).contract(TestContracts.chat()).build();
		Session session = lenient.session("chat", A2TestSupport.newSessionId());
		assertThat(session.append(message(" "))).hasSize(1);
	}

	@Test
	void malformedSessionId() {
		for (String bad : new String[] { null, "", " ", "a/b", "with space", "ünïcode", "a\nb", "x".repeat(257) }) {
			assertThatThrownBy(() -> this.a2.session("chat", bad)).isInstanceOf(A2Exception.class)
				.hasMessageContaining("must be 1-256 characters of letters, digits and . _ : ~ -")
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.INVALID_PAYLOAD);
		}
		assertThat(this.a2.session("chat", "Az09._:~-").id()).isEqualTo("Az09._:~-");
		assertThat(this.a2.session("chat", "x".repeat(256)).id()).hasSize(256);
	}

	@Test
	void unknownContract() {
		assertThatThrownBy(() -> this.a2.session("nope", "s")).isInstanceOf(A2Exception.class)
			.hasMessageContaining("no contract named 'nope'")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
		assertThatThrownBy(() -> this.a2.session(null, "s")).isInstanceOf(A2Exception.class)
			.hasMessageContaining("no contract named 'null'")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
	}

	@Test
	void idPostgresCannotStore() {
		assertRejected(() -> this.session.append(message("ok"), message("bad", "bad\u0000id")), "events[1].id");
	}

	@Test
	void scheduleOfAnUnknownTypeNoEventsOrAReservedIdStoresNoTask() {
		assertRejected(() -> this.session.schedule("later", Instant.now(), NewEvent.of("nope", "x")),
				"events[0].type 'nope' is not an event type");
		assertRejected(() -> this.session.schedule("later", Instant.now()), "events must be a non-empty list");
		assertRejected(() -> this.session.schedule("later", Instant.now(),
				NewEvent.of("note", new TestContracts.Note("x"), DerivedIds.returnedEvent("trigger", 0, "echo"))),
				"events[0].id is shaped like a UUIDv5");
		assertThat(scheduledTasks()).isZero();
	}

	@Test
	void scheduleAtAnInstantNoTaskCanBeDueAtStoresNoTask() {
		NewEvent note = NewEvent.of("note", new TestContracts.Note("x"));
		assertRejected(() -> this.session.schedule("later", Instant.MAX, note), "at must be an instant from");
		assertRejected(() -> this.session.schedule("later", Instant.MIN, note), "at must be an instant from");
		assertRejected(() -> this.session.schedule("later", null, note), "was null");
		assertRejected(() -> this.session.scheduleClear("later", Instant.MAX, null), "at must be an instant from");
		assertThat(scheduledTasks()).isZero();
	}

	@Test
	void scheduleWithoutANameStoresNoTask() {
		NewEvent note = NewEvent.of("note", new TestContracts.Note("x"));
		assertRejected(() -> this.session.schedule(null, Instant.now(), note), "name must not be null");
		assertRejected(() -> this.session.scheduleClear(null, Instant.now(), null), "name must not be null");
		assertThat(scheduledTasks()).isZero();
	}

	@Test
	void badHistoryAndStateParameters() {
		assertRejected(() -> this.session.history(-1, 10), "after must be 0 or more");
		assertRejected(() -> this.session.history(0, 0), "limit must be 1-1000");
		assertRejected(() -> this.session.history(0, 1001), "limit must be 1-1000");
		assertRejected(() -> this.session.state("count", -1), "through must be 0 or more");
		assertThatThrownBy(() -> this.session.state("nope")).isInstanceOf(A2Exception.class)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.UNKNOWN_REDUCER);
	}

	private long scheduledTasks() {
		return JdbcClient.create(this.dataSource)
			.sql("SELECT count(*) FROM a2_schedule WHERE session_id = ?")
			.param(this.session.id())
			.query(Long.class)
			.single();
	}

	private void assertRejected(ThrowingCallable call, String message) {
		long before = A2TestSupport.rows(this.dataSource, this.session.id());
		assertThatThrownBy(call).isInstanceOf(A2Exception.class)
			.hasMessageContaining(message)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.INVALID_PAYLOAD);
		assertThat(A2TestSupport.rows(this.dataSource, this.session.id())).as("rows stored").isEqualTo(before);
	}

}
