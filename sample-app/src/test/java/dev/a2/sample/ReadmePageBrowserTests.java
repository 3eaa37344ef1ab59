package dev.a2.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.sample.TourContract.MessageSent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's page ("From a page"), read from README.md as it stands and served by the running sample,
 * in headless Chromium: what is typed and sent shows in its list, an event another participant appends
 * shows live, and its presence reaches the server. Skipped, saying how to install Chromium, where there
 * is none.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ReadmePageBrowserTests {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	/** The first {@code html} block after the README's heading "From a page". */
	private static final Pattern PAGE = Pattern.compile("## From a page\\n.*?```html\\n(.*?)```", Pattern.DOTALL);

	@LocalServerPort
	private int port;

	@Autowired
	private A2Server a2;

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
	void whatThePageSendsAndWhatOthersAppendShowsInItsListAndItsPresenceIsKept() {
		this.browser = Chromium.start();
		this.browser.get("http://localhost:" + this.port + "/readme-page.html");

		this.browser.findElement(By.id("text")).sendKeys("hello from the README");
		this.browser.findElement(By.id("send")).click();
		waitUntil((b) -> lines(b).contains("ann: hello from the README"));

		// stored once, as the page pushed it
		Session lobby = this.a2.session("chat", "lobby");
		assertThat(lobby.history(0, 1000).events())
			.filteredOn((e) -> e.payload() instanceof MessageSent sent && sent.text().equals("hello from the README"))
			.singleElement()
			.satisfies((e) -> assertThat(((MessageSent) e.payload()).author()).isEqualTo("ann"));

		// another participant's message arrives live
		lobby.append(NewEvent.of("message.sent", new MessageSent("hi ann", "bob", "bob")));
		waitUntil((b) -> lines(b).contains("bob: hi ann"));
		assertThat(lines(this.browser)).containsSubsequence("ann: hello from the README", "bob: hi ann");

		// and the page keeps ann online
		waitUntil((b) -> lobby.presence().participants().containsKey("ann"));
		assertThat(lobby.presence().participants().get("ann").get("online").value()).isEqualTo(true);
	}

	private static List<String> lines(WebDriver browser) {
		return browser.findElements(By.cssSelector("#log li")).stream().map(WebElement::getText).toList();
	}

	private void waitUntil(java.util.function.Function<WebDriver, Boolean> condition) {
		try {
			new WebDriverWait(this.browser, PATIENCE, Duration.ofMillis(50)).until(condition::apply);
		}
		catch (RuntimeException ex) {
			Chromium.screenshot(this.browser, "failed-readme-page-" + System.currentTimeMillis());
			throw ex;
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ReadmePage {

		@Bean
		RouterFunction<ServerResponse> readmePage() throws IOException {
			Matcher page = PAGE.matcher(Files.readString(Path.of("..", "README.md")));
			assertThat(page.find()).as("README.md has an ```html block under '## From a page'").isTrue();
			String html = "<!doctype html><html><head><meta charset=\"utf-8\"></head><body>\n" + page.group(1)
					+ "</body></html>\n";
			return RouterFunctions.route()
				.GET("/readme-page.html", (request) -> ServerResponse.ok().contentType(MediaType.TEXT_HTML).bodyValue(html))
				.build();
		}

	}

}
