package dev.a2.web;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JavaScript client served under the base path, as a page's {@code import} fetches it: the very
 * files of {@code a2-client/src}, as JavaScript, revalidated by ETag.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "a2.web.base-path=/realtime")
@AutoConfigureWebTestClient
class ClientScriptsIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("clientscripts", registry::add);
	}

	@Autowired
	private WebTestClient http;

	@Test
	void theClientAndItsReactBindingsAreServedAsJavaScriptUnderTheBasePath() throws Exception {
		for (String file : new String[] { "client.js", "react.js" }) {
			String source = Files.readString(Path.of("..", "a2-client", "src", file), StandardCharsets.UTF_8);
			byte[] served = this.http.get()
				.uri("/realtime/" + file)
				.exchange()
				.expectStatus().isOk()
				.expectHeader().contentType("text/javascript;charset=UTF-8")
				.expectHeader().valueEquals(HttpHeaders.CACHE_CONTROL, "no-cache")
				.expectHeader().valueEquals("X-Content-Type-Options", "nosniff")
				.expectBody().returnResult().getResponseBody();
			assertThat(new String(served, StandardCharsets.UTF_8)).isEqualTo(source);
		}
	}

	@Test
	void anUnchangedScriptIsAnsweredNotModified() {
		String etag = this.http.get().uri("/realtime/client.js").exchange().expectStatus().isOk()
			.returnResult(byte[].class).getResponseHeaders().getETag();
		assertThat(etag).isNotBlank();
		this.http.get().uri("/realtime/client.js").header(HttpHeaders.IF_NONE_MATCH, etag).exchange()
			.expectStatus().isNotModified();
	}

	@Test
	void noOtherFileIsServed() {
		this.http.get().uri("/realtime/secret.js").exchange().expectStatus().isNotFound();
		this.http.get().uri("/realtime/..%2Fapplication.properties").exchange().expectStatus().is4xxClientError();
		this.http.get().uri("/a2/client.js").exchange().expectStatus().isNotFound();
	}

}
