package dev.a2.autoconfigure;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads HTTP/1.1 answers off a raw socket, one at a time, for tests that send several requests on one
 * kept-alive connection and must see what became of it (no client pool to hide a close).
 */
final class RawHttpAnswers {

	private RawHttpAnswers() {
	}

	/**
	 * Reads one answer, its body by {@code Content-Length} or in chunks, and returns its head and body
	 * as text.
	 * @throws EOFException when the server closes the connection first
	 */
	static String answer(InputStream in) throws IOException {
		String head = head(in);
		StringBuilder answer = new StringBuilder(head);
		boolean chunked = false;
		for (String line : head.split("\r\n")) {
			if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
				answer.append(new String(in.readNBytes(Integer.parseInt(line.substring(15).trim())), StandardCharsets.UTF_8));
			}
			chunked |= line.regionMatches(true, 0, "transfer-encoding: chunked", 0, 26);
		}
		while (chunked) {
			int size = Integer.parseInt(line(in).trim(), 16);
			answer.append(new String(in.readNBytes(size), StandardCharsets.UTF_8));
			in.readNBytes(2);
			chunked = size > 0;
		}
		return answer.toString();
	}

	/** Reads one answer (as {@link #answer}) and returns its status line. */
	static String statusLine(InputStream in) throws IOException {
		return answer(in).split("\r\n", 2)[0];
	}

	private static String head(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
			int next = in.read();
			if (next < 0) {
				throw new EOFException("the server closed the connection after " + head);
			}
			head.write(next);
		}
		return head.toString(StandardCharsets.ISO_8859_1);
	}

	private static String line(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		while (!line.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n")) {
			int next = in.read();
			if (next < 0) {
				throw new EOFException("the server closed the connection");
			}
			line.write(next);
		}
		return line.toString(StandardCharsets.ISO_8859_1);
	}

}
