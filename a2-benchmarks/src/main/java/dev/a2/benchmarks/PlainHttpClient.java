package dev.a2.benchmarks;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive HTTP/1.1 connection written and read by hand, as a load tool such as wrk does: the
 * pushes measure the server, not a client framework sharing its cores.
 */
final class PlainHttpClient implements AutoCloseable {

	private final Socket socket;

	private final OutputStream out;

	private final InputStream in;

	private final String host;

	PlainHttpClient(int port) throws IOException {
		this.socket = new Socket("localhost", port);
		this.socket.setTcpNoDelay(true);
		this.out = this.socket.getOutputStream();
		this.in = new BufferedInputStream(this.socket.getInputStream(), 16 * 1024);
		this.host = "localhost:" + port;
	}

	/** POSTs a JSON body and answers the status, having read the whole answer. */
	int post(String path, String json) throws IOException {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		String head = "POST " + path + " HTTP/1.1\r\nHost: " + this.host + "\r\nContent-Type: application/json\r\nContent-Length: "
				+ body.length + "\r\n\r\n";
		this.out.write(head.getBytes(StandardCharsets.US_ASCII));
		this.out.write(body);
		this.out.flush();
		String status = line();
		int length = 0;
		boolean chunked = false;
		for (String header = line(); !header.isEmpty(); header = line()) {
			if (header.regionMatches(true, 0, "content-length:", 0, 15)) {
				length = Integer.parseInt(header.substring(15).trim());
			}
			else if (header.regionMatches(true, 0, "transfer-encoding:", 0, 18)) {
				chunked = header.substring(18).trim().equalsIgnoreCase("chunked");
			}
		}
		if (chunked) {
			// Tomcat chunks an answer of unknown length (a Spring MVC controller's JSON)
			for (int chunk = Integer.parseInt(line(), 16); chunk > 0; chunk = Integer.parseInt(line(), 16)) {
				this.in.readNBytes(chunk);
				line();
			}
			line();
		}
		else {
			this.in.readNBytes(length);
		}
		return Integer.parseInt(status.substring(9, 12));
	}

	private String line() throws IOException {
		StringBuilder line = new StringBuilder();
		for (int c = this.in.read(); c != '\n'; c = this.in.read()) {
			if (c < 0) {
				throw new IOException("the server closed the connection");
			}
			if (c != '\r') {
				line.append((char) c);
			}
		}
		return line.toString();
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
