package dev.a2.testkit;

import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.Session;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tests of a class share its schema, so the dead letters of an earlier test are still stored
 * when a later one begins: the kit's assertions about dead letters are about the test's own.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class A2TestKitDeadLettersIntegrationTests {

	record Note(String text) {
	}

	static final Contract MAIL = Contract.builder("mail").event("mail.requested", Note.class).build();

	static final Consumer SENDER = Consumer.builder("mail", "sender").types("mail.requested").run((context) -> {
		if (context.event().payload(Note.class).text().equals("poison")) {
			throw new NonRetriableException("no such address");
		}
		return null;
	});

	@RegisterExtension
	static final A2TestExtension a2 = new A2TestExtension((server) -> server.contract(MAIL).consumer(SENDER));

	@Test
	@Order(1)
	void aPoisonedEventIsDeadLettered(A2TestKit kit) {
		Session session = kit.session("mail", "first");
		session.append(NewEvent.of("mail.requested", new Note("poison")));

		kit.drain();

		assertThat(kit).hasDeadLetter("sender", "first", 1);
		assertThat(kit).deadLetters().singleElement().satisfies((dead) -> assertThat(dead.session()).isEqualTo("first"));
	}

	@Test
	@Order(2)
	void aLaterTestOfTheClassSeesNoneOfTheEarlierTestsDeadLetters(A2TestKit kit) {
		Session session = kit.session("mail", "second");
		session.append(NewEvent.of("mail.requested", new Note("hello")));

		kit.drain();

		assertThat(kit.server().deadLetters("mail", "first", null, 10)).as("the earlier test's, still stored").hasSize(1);
		assertThat(kit).hasNoDeadLetters();
		assertThat(kit).deadLetters().isEmpty();
	}

	@Test
	@Order(3)
	void aDeadLetterOfItsOwnIsSeenBesideTheEarlierOnes(A2TestKit kit) {
		Session session = kit.session("mail", "third");
		session.append(NewEvent.of("mail.requested", new Note("poison")));

		kit.drain();

		assertThat(kit).deadLetters().singleElement().satisfies((dead) -> assertThat(dead.session()).isEqualTo("third"));
		assertThat(kit).hasDeadLetter("sender", "third", 1);
	}

}
