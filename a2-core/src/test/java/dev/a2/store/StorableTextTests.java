package dev.a2.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What PostgreSQL cannot hold, found, and replaced where text must not be refused. */
class StorableTextTests {

	@Test
	void textWithWholeCharactersIsStoredAsItIs() {
		String text = "Smile \uD83D\uDE00, caf\u00E9";
		assertThat(StorableText.isStorable(text)).isTrue();
		assertThat(StorableText.replacingUnstorable(text)).isSameAs(text);
	}

	@Test
	void eachNulAndHalfPairIsReplacedAndWholePairsAroundThemAreKept() {
		assertThat(StorableText.replacingUnstorable("a\u0000b")).isEqualTo("a\uFFFDb");
		assertThat(StorableText.replacingUnstorable("\uDE00\uD83D\uDE00")).isEqualTo("\uFFFD\uD83D\uDE00");
		assertThat(StorableText.replacingUnstorable("\uD83Dx\uD83D")).isEqualTo("\uFFFDx\uFFFD");
		assertThat(StorableText.replacingUnstorable("\uD83D\uD83D\uDE00\u0000")).isEqualTo("\uFFFD\uD83D\uDE00\uFFFD");
		assertThat(StorableText.isStorable("\uD83D\uD83D\uDE00")).isFalse();
		assertThat(StorableText.isStorable("\uDE00")).isFalse();
	}

}
