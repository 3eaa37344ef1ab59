package dev.a2;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * What A2 logs while it is open, as lines: the tests' logger (slf4j-simple) writes to whatever
 * {@code System.err} is at the time, which this tees into a buffer.
 */
public final class LogCapture implements AutoCloseable {

	private final PrintStream original = System.err;

	private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

	public LogCapture() {
		OutputStream tee = new OutputStream() {

			@Override
			public void write(int b) {
				synchronized (LogCapture.this.captured) {
					LogCapture.this.captured.write(b);
				}
				LogCapture.this.original.write(b);
			}

			@Override
			public void write(byte[] bytes, int offset, int length) {
				synchronized (LogCapture.this.captured) {
					LogCapture.this.captured.write(bytes, offset, length);
				}
				LogCapture.this.original.write(bytes, offset, length);
			}

		};
		System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
	}

	/** The lines logged so far that contain {@code text}. */
	public List<String> lines(String text) {
		String all;
		synchronized (this.captured) {
			all = this.captured.toString(StandardCharsets.UTF_8);
		}
		return Arrays.stream(all.split("\\R")).filter((line) -> line.contains(text)).toList();
	}

	@Override
	public void close() {
		System.setErr(this.original);
	}

}
