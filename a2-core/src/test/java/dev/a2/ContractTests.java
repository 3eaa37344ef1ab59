package dev.a2;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ContractTests {

	@Test
	void holdsEventsPresenceAndReducersInOrder() {
		Contract contract = TestContracts.chat();
		assertThat(contract.name()).isEqualTo("chat");
		assertThat(contract.events()).containsKeys("message.sent", "order.placed", "note");
		assertThat(contract.payloadType("message.sent")).isEqualTo(TestContracts.MessageSent.class);
		assertThat(contract.payloadType("nope")).isNull();
		assertThat(contract.presence()).containsEntry("typing", Boolean.class);
		assertThat(contract.reducers()).containsKeys("count", "transcript");
	}

	@Test
	void namesFollowTheRules() {
		assertThat(Contract.builder("a").event("x", String.class).build().name()).isEqualTo("a");
		assertThat(Contract.builder("0chat.v2_x-y").event("x", String.class).build().name()).isEqualTo("0chat.v2_x-y");
		for (String bad : new String[] { "", "Chat", "-chat", ".chat", "chat room", "chat/1", "a".repeat(65) }) {
			assertThatIllegalArgumentException().isThrownBy(() -> Contract.builder(bad))
				.withMessageContaining("must be 1-64 characters");
		}
		assertThat(Contract.builder("a".repeat(64)).event("x", String.class).build().name()).hasSize(64);
	}

	@Test
	void typesUnderA2AreReserved() {
		assertThatIllegalArgumentException().isThrownBy(() -> Contract.builder("c").event("a2.cleared", String.class))
			.withMessageContaining("'a2.cleared' starts with 'a2.'");
	}

	@Test
	void rejectsEmptyAndDuplicateDeclarations() {
		assertThatIllegalArgumentException().isThrownBy(() -> Contract.builder("c").event("", String.class))
			.withMessageContaining("non-empty");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Contract.builder("c").event("x", String.class).event("x", Integer.class))
			.withMessageContaining("declares event type 'x' twice");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Contract.builder("c").presence("typing", Boolean.class).presence("typing", Boolean.class))
			.withMessageContaining("presence field 'typing' twice");
		assertThatIllegalArgumentException().isThrownBy(() -> Contract.builder("c").build())
			.withMessageContaining("declares no event types");
	}

	@Test
	void unknownReducerIsAnError() {
		assertThatThrownBy(() -> TestContracts.chat().reducer("nope")).isInstanceOf(A2Exception.class)
			.satisfies((ex) -> assertThat(((A2Exception) ex).code()).isEqualTo(ErrorCode.UNKNOWN_REDUCER))
			.hasMessageContaining("no reducer 'nope'")
			// what was asked, never what there is: the caller may be a stranger
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("count").doesNotContain("transcript"));
	}

	@Test
	void serverOnlyTypesAreDeclaredTypes() {
		Contract contract = Contract.builder("c")
			.serverOnly("answer.done")
			.event("question.asked", String.class)
			.event("answer.done", String.class)
			.build();
		assertThat(contract.serverOnly()).containsExactly("answer.done");
		assertThat(contract.isServerOnly("answer.done")).isTrue();
		assertThat(contract.isServerOnly("question.asked")).isFalse();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Contract.builder("c").event("x", String.class).serverOnly("answer.don").build())
			.withMessageContaining("marks 'answer.don' server-only but declares no such event type");
	}

}
