package dev.a2.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The operator console: one self-contained page, read from the jar once. */
final class ConsolePage {

	private static final String RESOURCE = "console.html";

	private ConsolePage() {
	}

	static String html() {
		return Holder.HTML;
	}

	private static final class Holder {

		static final String HTML = read();

		private static String read() {
			try (InputStream in = ConsolePage.class.getResourceAsStream(RESOURCE)) {
				if (in == null) {
					throw new IllegalStateException("the operator console's page is missing from the jar: " + RESOURCE);
				}
				return new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
