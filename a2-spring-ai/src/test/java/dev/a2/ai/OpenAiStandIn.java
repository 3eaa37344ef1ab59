package dev.a2.ai;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

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

	private final HttpServer server;

	OpenAiStandIn(String... tokens) throws IOException {
		this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		this.server.createContext("/", (exchange) -> {
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

	private static String chunk(String delta, String finishReason) {
		return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\","
				+ "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + finishReason + "}]}\n\n";
	}

	/** Spring AI's OpenAI model, configured to talk to this stand-in with model {@code gpt-4o-mini}. */
	OpenAiChatModel model() {
		return OpenAiChatModel.builder()
			.options(OpenAiChatOptions.builder()
				.baseUrl("http://127.0.0.1:" + this.server.getAddress().getPort() + "/v1")
				.apiKey("test-key")
				.model("gpt-4o-mini")
				.maxRetries(0)
				.build())
			.build();
	}

	@Override
	public void close() {
		this.server.stop(0);
	}

}
