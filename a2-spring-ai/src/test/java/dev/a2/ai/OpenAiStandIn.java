package dev.a2.ai;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * OpenAI's chat completions API as far as a streamed answer goes, on a local port: it streams
 * {@code tokens} as chunks of one answer to every request, and records the requests' bodies. Spring
 * AI's own {@link OpenAiChatModel} talks to it, so a test sees what that provider does with what A2
 * sends it.
 */
final class OpenAiStandIn implements AutoCloseable {

	final List<String> requests = new CopyOnWriteArrayList<>();

	private final CountDownLatch released = new CountDownLatch(1);

	private final HttpServer server;

	OpenAiStandIn(String... tokens) throws IOException {
		this(false, 0, tokens);
	}

	private OpenAiStandIn(boolean pause, int refusal, String... tokens) throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", (exchange) -> {
			if (refusal != 0) {
				this.requests.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
				byte[] error = ("{\"error\":{\"message\":\"" + tokens[0] + "\",\"type\":\"requests\",\"code\":\"" + refusal + "\"}}")
					.getBytes(StandardCharsets.UTF_8);
				exchange.getResponseHeaders().set("Content-Type", "application/json");
				exchange.sendResponseHeaders(refusal, error.length);
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(error);
				}
				return;
			}
			if (pause) {
				this.requests.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
				exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
				exchange.sendResponseHeaders(200, 0);
				OutputStream out = exchange.getResponseBody();
				for (String token : tokens) {
					out.write(chunk("{\"content\":\"" + token + "\"}", "null").getBytes(StandardCharsets.UTF_8));
				}
				out.flush();
				try {
					// quiet, as a model that thinks long in the middle of its answer, until the test ends
					this.released.await(5, TimeUnit.MINUTES);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				exchange.close();
				return;
			}
			this.requests.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
			StringBuilder body = new StringBuilder();
			for (String token : tokens) {
				body.append(chunk("{\"content\":\"" + token + "\"}", "null"));
			}
			body.append(chunk("{}", "\"stop\"")).append("data: [DONE]\n\n");
			byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
			exchange.sendResponseHeaders(200, bytes.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(bytes);
			}
		});
		this.server.start();
	}

	/**
	 * A stand-in that answers every request with {@code tokens} and then sends nothing until it
	 * is closed, as a model that thinks long in the middle of its answer.
	 */
	static OpenAiStandIn pausing(String... tokens) throws IOException {
		return new OpenAiStandIn(true, 0, tokens);
	}

	/** A stand-in that refuses every request with {@code status} and OpenAI's error body holding {@code message}. */
	static OpenAiStandIn refusing(int status, String message) throws IOException {
		return new OpenAiStandIn(false, status, message);
	}

	private static String chunk(String delta, String finishReason) {
		return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\","
				+ "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + finishReason + "}]}\n\n";
	}

	/** Spring AI's OpenAI model, configured to talk to this stand-in with model {@code gpt-4o-mini}. */
	OpenAiChatModel model() {
		return model(Duration.ofSeconds(60));
	}

	/** The same, with the client's timeout for a whole request (a streamed answer included). */
	OpenAiChatModel model(Duration timeout) {
		return OpenAiChatModel.builder()
			.options(OpenAiChatOptions.builder()
				.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort() + "/v1")
				.apiKey("test-key")
				.model("gpt-4o-mini")
				.maxRetries(0)
				.timeout(timeout)
				.build())
			.build();
	}

	@Override
	public void close() {
		this.released.countDown();
		this.server.stop(0);
	}

}
