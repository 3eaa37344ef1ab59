package dev.a2;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The vectors were computed once with Python's {@code uuid.uuid5} over the same namespaces and
 * length-prefixed names; they must never change, or re-runs after an upgrade would append twice.
 */
class DerivedIdsTests {

	@Test
	void isStandardUuidV5() {
		// RFC 4122 appendix example, as Python's uuid5(NAMESPACE_DNS, 'python.org') gives it
		UUID dns = UUID.fromString("6ba7b810-9dad-11d1-80b4-00c04fd430c8");
		assertThat(DerivedIds.uuidV5(dns, "python.org")).hasToString("886313e1-3b8a-5372-9b90-0c9aee199e5d");
	}

	@Test
	void appendedEventIds() {
		assertThat(DerivedIds.appendedEvent("evt-1", "reply", 0, "assistant")).isEqualTo("c794ce88-2af2-511b-ad2f-b577f9a451a6");
		assertThat(DerivedIds.appendedEvent("evt-1", "reply", 1, "assistant")).isEqualTo("34ff252b-c02e-55d1-a024-e9b502085dfa");
		assertThat(DerivedIds.appendedEvent("evt-1", "reply", 0, null)).isEqualTo("f437ac99-5187-57d2-8e15-174235655ca9");
	}

	@Test
	void returnedEventIds() {
		assertThat(DerivedIds.returnedEvent("evt-1", 0, "assistant")).isEqualTo("c26d0141-4366-529c-9d7f-c6b39105cd0b");
	}

	@Test
	void effectKeys() {
		assertThat(DerivedIds.effect("chat", "room-1", "evt-1", "assistant", "charge"))
			.isEqualTo("fdf2ddc7-fe32-5b86-a702-47c6a11883f3");
		assertThat(DerivedIds.effect("chat", "room-2", "evt-1", "assistant", "charge"))
			.isEqualTo("6b826a44-6098-505b-818d-0b411f9f2818");
		assertThatIllegalArgumentException().isThrownBy(() -> DerivedIds.effect("chat", "room-1", "evt-1", "assistant", ""));
	}

	@Test
	void scheduleIds() {
		assertThat(DerivedIds.schedule("chat", "room-1", "evt-1", "expire", 0, "assistant"))
			.isEqualTo("6515eee0-fb88-5e19-a1eb-5d11fd987ae9");
		assertThat(DerivedIds.scheduleClear("chat", "room-1", "evt-1", "expire", 2, 7L, "assistant"))
			.isEqualTo("abc6335d-6184-5a28-bfa5-ede30b7c305c");
		assertThat(DerivedIds.scheduleClear("chat", "room-1", "evt-1", "expire", 2, null, null))
			.isEqualTo("c66c3107-29e0-5997-ae21-399d4b5dd049");
		assertThat(DerivedIds.scheduledEvent("3f1c2b9a-1111-5222-8333-444455556666", 0))
			.isEqualTo("3376e173-c451-5648-910d-1b5bc0d234ad");
	}

	@Test
	void partsCannotRunIntoEachOther() {
		assertThat(DerivedIds.appendedEvent("ab", "c", 0, null)).isNotEqualTo(DerivedIds.appendedEvent("a", "bc", 0, null));
		assertThat(DerivedIds.appendedEvent("e", "n", 0, "x")).isNotEqualTo(DerivedIds.appendedEvent("e", "n", 0, null));
		assertThat(DerivedIds.returnedEvent("e", 0, "c")).isNotEqualTo(DerivedIds.appendedEvent("e", "0", 0, "c"));
	}

	@Test
	void derivedIdsHaveTheReservedShape() {
		String id = DerivedIds.returnedEvent("evt-1", 3, "assistant");
		assertThat(DerivedIds.isDerivedShape(id)).isTrue();
		assertThat(DerivedIds.isDerivedShape(id.toUpperCase())).isTrue();
		assertThat(DerivedIds.isDerivedShape(UUID.randomUUID().toString())).isFalse();
		assertThat(DerivedIds.isDerivedShape("message-1")).isFalse();
	}

	@Test
	void appendNameMustNotBeEmpty() {
		assertThatIllegalArgumentException().isThrownBy(() -> DerivedIds.appendedEvent("evt-1", "", 0, null));
	}

}
