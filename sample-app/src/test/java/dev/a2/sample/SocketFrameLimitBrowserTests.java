package dev.a2.sample;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A page's push too large for a socket frame, in Chromium: the server closes the socket for such a
 * frame, which Chromium tells as a protocol error (1002) where Node's WebSocket says 1009. The client
 * took only 1009 for it, so in a browser every such push dropped the socket again, and every view of
 * the contract on it reconnected (found by a trial of a collaborative list).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SocketFrameLimitBrowserTests {

	@LocalServerPort
	private int port;

	private WebDriver browser;

	@BeforeAll
	static void chromium() {
		Chromium.assumeInstalled();
	}

	@AfterEach
	void quit() {
		if (this.browser != null) {
			this.browser.quit();
		}
	}

	@Test
	void aPushTooLargeForAFrameDropsTheSocketOnceAndGoesOverHttpAfter() {
		this.browser = Chromium.start();
		this.browser.get("http://localhost:" + this.port + "/");
		this.browser.manage().timeouts().scriptTimeout(Duration.ofSeconds(60));
		Object result = ((JavascriptExecutor) this.browser).executeAsyncScript("""
				const done = arguments[arguments.length - 1];
				(async () => {
				  const { createClient } = await import("/a2/client.js");
				  const client = createClient({ transport: "socket" });
				  const room = client.session("chat", "frame-limit");
				  const bystander = client.session("chat", "frame-limit-bystander");
				  const live = (view) => new Promise((resolve) => {
				    const check = () => view.status === "live" ? resolve() : setTimeout(check, 20);
				    check();
				  });
				  await live(room);
				  await live(bystander);
				  let drops = 0;
				  bystander.on("status", (status) => { if (status === "reconnecting") drops++; });
				  const large = [{ type: "message.sent", payload: { text: "x".repeat(600 * 1024), author: "ann", thread: "t" } }];
				  const log = [];
				  for (let i = 0; i < 2; i++) {
				    try {
				      await room.push(large);
				      log.push("stored");
				    } catch (error) {
				      log.push(error.code);
				    }
				  }
				  await live(bystander);
				  log.push("drops " + drops);
				  await room.push([{ type: "message.sent", payload: { text: "small", author: "ann", thread: "t" } }]);
				  log.push("small stored");
				  client.close();
				  return log;
				})().then(done, (error) => done(["failed: " + error]));""");
		assertThat(result).isEqualTo(List.of("PAYLOAD_TOO_LARGE", "PAYLOAD_TOO_LARGE", "drops 1", "small stored"));
	}

}
