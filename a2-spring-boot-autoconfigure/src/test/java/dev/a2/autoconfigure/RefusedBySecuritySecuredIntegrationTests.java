package dev.a2.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pushes that Spring Security refuses before anything reads their bodies (no CSRF token, no
 * credentials), sent back to back on one keep-alive connection as a browser's page may send them:
 * the connection goes on serving the next request. Reactor Netty 1.3 stops reading a connection
 * whose queued request is answered at once with its body unread (reactor/reactor-netty#4361), so
 * the page's next request on it hung.
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(A2EndpointSecuredIntegrationTests.Security.class)
@EnabledIf(value = "springSecurityPresent", disabledReason = "runs in the surefire execution with Spring Security")
class RefusedBySecuritySecuredIntegrationTests {

	static boolean springSecurityPresent() {
		return ClassUtils.isPresent(A2AuthorizationAutoConfiguration.SECURITY, null);
	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("refusedbysecurity", registry::add);
	}

	@LocalServerPort
	private int port;

	@Test
	void pushesRefusedBySecurityLeaveTheirKeepAliveConnectionServingTheNext() throws IOException {
		String body = "{\"events\":[{\"type\":\"order.placed\",\"payload\":{\"sku\":\"" + "s".repeat(2000) + "\",\"quantity\":1}}]}";
		String alice = "Authorization: Basic " + Base64.getEncoder().encodeToString("alice:alice-password".getBytes(StandardCharsets.UTF_8)) + "\r\n";
		String withoutCsrf = post("/a2/orders/sessions/keep-alive/events", alice, body);
		String withoutCredentials = post("/a2/orders/sessions/keep-alive/events", "", body);
		String read = "GET /a2/orders/sessions/keep-alive/events HTTP/1.1\r\nHost: a2\r\n" + alice + "\r\n";
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(30_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			for (int round = 1; round <= 5; round++) {
				out.write((withoutCsrf + withoutCredentials + withoutCsrf).getBytes(StandardCharsets.UTF_8));
				out.flush();
				assertThat(RawHttpAnswers.statusLine(in)).as("round %d, no CSRF token", round).contains(" 403 ");
				// Spring Security checks the CSRF token before the credentials
				assertThat(RawHttpAnswers.statusLine(in)).as("round %d, no credentials", round).contains(" 403 ");
				assertThat(RawHttpAnswers.statusLine(in)).as("round %d, no CSRF token again", round).contains(" 403 ");
				out.write(read.getBytes(StandardCharsets.UTF_8));
				out.flush();
				assertThat(RawHttpAnswers.statusLine(in)).as("round %d, the next request", round).contains(" 200 ");
			}
		}
	}

	private static String post(String path, String headers, String body) {
		return "POST " + path + " HTTP/1.1\r\nHost: a2\r\n" + headers + "Content-Type: application/json\r\nContent-Length: "
				+ body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
	}

}
