package dev.a2.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.jayway.jsonpath.JsonPath;
import dev.a2.A2Server;
import dev.a2.NewEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chromium.ChromiumDriver;
import org.openqa.selenium.chromium.ChromiumNetworkConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tour in real browsers: headless Chromium windows on the chat page and the operator console
 * of a running sample. Skipped, saying how to install Chromium, where there is none.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "sample.assistant.token-delay=150ms", "a2.drain.sweep-interval=200ms" })
@AutoConfigureWebTestClient
class TourBrowserTests {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@LocalServerPort
	private int port;

	@Autowired
	private WebTestClient http;

	@Autowired
	private A2Server a2;

	private final List<WebDriver> browsers = new ArrayList<>();

	@BeforeAll
	static void chromium() {
		Chromium.assumeInstalled();
	}

	@AfterEach
	void quit() {
		this.browsers.forEach(WebDriver::quit);
	}

	@Test
	void twoWindowsInARoomSeeEachOthersTypingAndMessages() {
		WebDriver ann = chat("together", "ann");
		WebDriver bob = chat("together", "bob");

		ann.findElement(By.id("text")).sendKeys("hello bob");
		waitUntil(bob, (b) -> b.findElement(By.id("typing")).getText().equals("ann is typing…"));
		waitUntil(bob, (b) -> !b.findElements(By.cssSelector("#people li[data-participant='ann']")).isEmpty());
		ann.findElement(By.id("text")).sendKeys(Keys.ENTER);
		waitUntil(bob, (b) -> messages(b).contains("ann: hello bob"));
		waitUntil(bob, (b) -> b.findElement(By.id("typing")).getText().isEmpty());

		bob.findElement(By.id("text")).sendKeys("hi ann, ask @assistant anything", Keys.ENTER);
		waitUntil(ann, (b) -> messages(b).contains("bob: hi ann, ask @assistant anything"));
		waitUntil(ann, (b) -> b.findElement(By.id("summary")).getText().startsWith("2 messages"));
		// bob's mention starts a reply that both windows see
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.reply[data-thread='bob']")).isEmpty());
		waitUntil(bob, (b) -> !b.findElements(By.cssSelector("#messages li.reply.done")).isEmpty());
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.reply.done")).isEmpty());
		Chromium.screenshot(ann, "chat");
	}

	@Test
	void aStreamedReplyGrowsTokenByTokenAndStopsWhenStopIsPressed() {
		WebDriver ann = chat("assistant", "ann");
		ann.findElement(By.id("text")).sendKeys("@assistant tell me about A2", Keys.ENTER);

		By reply = By.cssSelector("#messages li.reply[data-thread='ann'] .text");
		int seen = 0;
		for (int growth = 0; growth < 3; growth++) {
			int before = seen;
			seen = waitUntil(ann, (b) -> {
				List<WebElement> replies = b.findElements(reply);
				int length = replies.isEmpty() ? 0 : replies.get(0).getText().length();
				return (length > before) ? length : null;
			});
		}
		waitUntil(ann, (b) -> b.findElement(By.id("stop")).isDisplayed());
		ann.findElement(By.id("stop")).click();
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.reply.stopped")).isEmpty());
		waitUntil(ann, (b) -> !b.findElement(By.id("stop")).isDisplayed());

		// once the assistant's run has ended, the page shows every token it wrote and no completion
		waitUntil(ann, (b) -> SampleApplicationIntegrationTests.pending(this.http, "assistant") == 0);
		String body = this.http.get().uri("/a2/chat/sessions/assistant/events?limit=1000").exchange()
			.expectBody(String.class).returnResult().getResponseBody();
		List<String> tokens = JsonPath.read(body, "$.events[?(@.type == 'reply.delta')].payload.text");
		List<Object> completions = JsonPath.read(body, "$.events[?(@.type == 'reply.completed')].index");
		assertThat(completions).isEmpty();
		assertThat(String.join("", tokens)).isNotEqualTo(String.join("", AssistantConsumer.tokens(
				new TourContract.MessageSent("@assistant tell me about A2", "ann", "ann"))));
		waitUntil(ann, (b) -> b.findElement(reply).getText().equals(String.join("", tokens).trim()));
		assertThat(ann.findElement(By.cssSelector("#messages li.reply")).getAttribute("class")).contains("stopped");
	}

	@Test
	void aRefusedMessageIsADeadLetterInTheConsoleAndRetryOrSkipUnblocksTheRoom() {
		WebDriver ann = chat("flaky", "ann");
		WebDriver console = browser("/actuator/a2/console#contract=chat&session=flaky");
		send(ann, "this will kaboom");
		send(ann, "and this one waits");

		By deadLetter = By.cssSelector("tr[data-dead-letter='chat/flaky/delivery/1']");
		waitUntil(console, (b) -> !b.findElements(deadLetter).isEmpty());
		assertThat(console.findElement(deadLetter).getText()).contains("delivery refused").contains("kaboom")
			.contains("1 failure").doesNotContain("attempt");
		waitUntil(console, (b) -> b.findElement(By.cssSelector("tr[data-consumer='chat/delivery'] .dead")).getText().equals("1"));
		assertThat(ann.findElements(By.cssSelector("#messages li.delivered"))).isEmpty();
		Chromium.screenshot(console, "console");

		// allow the word on the page, then retry in the console: both messages are delivered, in order
		WebElement refused = ann.findElement(By.id("refused"));
		refused.clear();
		refused.sendKeys(Keys.ENTER);
		waitUntil(ann, (b) -> this.http.get().uri("/demo/refused-word").exchange().expectBody(String.class)
			.returnResult().getResponseBody().contains("\"word\":\"\""));
		// the console refreshes every 2 s; a row that did not change stays the element the operator aims at
		WebElement retry = console.findElement(deadLetter).findElement(By.cssSelector("button.retry"));
		String updated = console.findElement(By.id("status")).getText();
		waitUntil(console, (b) -> !b.findElement(By.id("status")).getText().equals(updated));
		retry.click();
		waitUntil(console, (b) -> b.findElements(deadLetter).isEmpty());
		waitUntil(ann, (b) -> delivered(b).equals(List.of("this will kaboom", "and this one waits")));

		// refuse it again; this time the operator skips it: the room moves on without delivering it
		ann.findElement(By.id("refused")).sendKeys("kaboom", Keys.ENTER);
		waitUntil(ann, (b) -> this.http.get().uri("/demo/refused-word").exchange().expectBody(String.class)
			.returnResult().getResponseBody().contains("kaboom"));
		long refusedIndex = send(ann, "kaboom twice");
		send(ann, "later");
		By second = By.cssSelector("tr[data-dead-letter='chat/flaky/delivery/" + refusedIndex + "']");
		waitUntil(console, (b) -> !b.findElements(second).isEmpty());
		console.findElement(second).findElement(By.cssSelector("button.skip")).click();
		waitUntil(console, (b) -> b.findElements(second).isEmpty());
		waitUntil(ann, (b) -> delivered(b).equals(List.of("this will kaboom", "and this one waits", "later")));
		waitUntil(console, (b) -> b.findElements(By.cssSelector("#events tr[data-index]")).size() == 7);
		Chromium.screenshot(console, "console-session");
	}

	@Test
	void reloadingThePageResumesWithoutDuplicates() {
		WebDriver ann = chat("reload", "ann");
		send(ann, "one");
		send(ann, "two");
		send(ann, "three");
		ann.navigate().refresh();
		waitUntil(ann, (b) -> b.findElement(By.id("connection")).getText().equals("live"));
		waitUntil(ann, (b) -> messages(b).size() == 3);
		send(ann, "four");
		waitUntil(ann, (b) -> messages(b).size() == 4);
		List<String> indexes = ann.findElements(By.cssSelector("#messages li.message"))
			.stream()
			.map((li) -> li.getDomAttribute("data-index"))
			.toList();
		assertThat(new HashSet<>(indexes)).hasSize(4);
		assertThat(messages(ann)).containsExactly("ann: one", "ann: two", "ann: three", "ann: four");
	}

	@Test
	void aReplyInterruptedByARestartShowsOnlyTheFinalAnswer() {
		WebDriver ann = chat("restarted", "ann");
		long asked = send(ann, "what is A2?");
		// the log a takeover leaves: attempt 1's words, the restart, attempt 2's answer, and a late word
		// of attempt 1 from the stalled instance, which is not the reply any more
		append("restarted", event("reply.delta", Map.of("replyTo", asked, "step", 0, "attempt", 1, "text", "The first attempt was cut ")));
		By reply = By.cssSelector("#messages li.reply[data-thread='ann'] .text");
		waitUntil(ann, (b) -> b.findElement(reply).getText().equals("The first attempt was cut"));
		append("restarted", event("reply.restarted", Map.of("replyTo", asked, "attempt", 2, "replaces", 1)),
				event("reply.delta", Map.of("replyTo", asked, "step", 0, "attempt", 2, "text", "The final ")),
				event("reply.delta", Map.of("replyTo", asked, "step", 0, "attempt", 1, "text", "words of the stalled attempt ")),
				event("reply.delta", Map.of("replyTo", asked, "step", 0, "attempt", 2, "text", "answer.")),
				event("reply.completed", Map.of("replyTo", asked, "step", 0, "attempt", 2, "finishReason", "STOP")));
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.reply.done")).isEmpty());
		assertThat(ann.findElements(reply)).singleElement().satisfies((text) -> assertThat(text.getText()).isEqualTo("The final answer."));
		assertThat(ann.findElement(By.cssSelector("#messages li.reply")).getAttribute("class")).contains("restarted");

		// a page opened afterwards reads the same log and shows the same
		WebDriver bob = chat("restarted", "bob");
		waitUntil(bob, (b) -> !b.findElements(By.cssSelector("#messages li.reply.done")).isEmpty());
		assertThat(bob.findElement(reply).getText()).isEqualTo("The final answer.");
	}

	@Test
	void aToolWaitsForApprovalOnThePageAndTheReplyGoesOnOnceApproved() {
		WebDriver ann = chat("pizza", "ann");
		send(ann, "@assistant order a pizza please");
		By approve = By.cssSelector("#messages li.approval button.approve");
		waitUntil(ann, (b) -> !b.findElements(approve).isEmpty());
		assertThat(ann.findElement(By.cssSelector("#messages li.approval .text")).getText()).startsWith("wants to run order_pizza");
		ann.findElement(approve).click();
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.approval.approved")).isEmpty());
		By answer = By.cssSelector("#messages li.reply.done[data-thread='ann'] .text");
		waitUntil(ann, (b) -> b.findElements(answer).stream().anyMatch((li) -> li.getText().startsWith("Done: Pizza order #1")));
		// the reply that asked waits no more: it said "waiting for approval" with a Stop beside it for good
		By asking = By.cssSelector("#messages li.reply[data-thread='ann']");
		waitUntil(ann, (b) -> b.findElements(asking).stream().noneMatch((li) -> li.getText().contains("waiting for approval")));
		assertThat(ann.findElement(By.id("stop")).isDisplayed()).as("Stop after the answer").isFalse();
		Chromium.screenshot(ann, "approval");
		ann.navigate().refresh();
		waitUntil(ann, (b) -> b.findElements(answer).stream().anyMatch((li) -> li.getText().startsWith("Done: Pizza order #1")));
		assertThat(ann.findElements(asking)).noneMatch((li) -> li.getText().contains("waiting for approval"));
		assertThat(ann.findElement(By.id("stop")).isDisplayed()).as("Stop after a reload").isFalse();
	}

	/** Appends as the server does: the assistant's event types are server-only, a browser may not push them. */
	private void append(String room, NewEvent... events) {
		this.a2.session("chat", room).append(events);
	}

	private static NewEvent event(String type, Map<String, Object> payload) {
		return NewEvent.of(type, payload);
	}

	@Test
	void aMessageSentOfflineWaitsInTheOutboxAcrossAReloadAndIsStoredOnce() {
		WebDriver ann = chat("offline", "ann");
		ChromiumNetworkConditions offline = new ChromiumNetworkConditions();
		offline.setOffline(true);
		((ChromiumDriver) ann).setNetworkConditions(offline);
		ann.findElement(By.id("text")).sendKeys("sent offline", Keys.ENTER);
		// shown at once as pending, and kept in IndexedDB, as no answer can come
		waitUntil(ann, (b) -> !b.findElements(By.cssSelector("#messages li.message.pending")).isEmpty());
		waitUntil(ann, (b) -> outboxSize(b) == 1);

		// the page goes before the push was answered; the next page, online, sends it from the outbox
		ann.get("about:blank");
		((ChromiumDriver) ann).deleteNetworkConditions();
		ann.get("http://localhost:" + this.port + "/?room=offline&name=ann");
		waitUntil(ann, (b) -> b.findElements(By.cssSelector("#messages li.message[data-index]:not(.pending)")).size() == 1);
		waitUntil(ann, (b) -> outboxSize(b) == 0);
		assertThat(messages(ann)).containsExactly("ann: sent offline");
		String body = this.http.get().uri("/a2/chat/sessions/offline/events?limit=1000").exchange()
			.expectBody(String.class).returnResult().getResponseBody();
		List<String> stored = JsonPath.read(body, "$.events[?(@.type == 'message.sent')].payload.text");
		assertThat(stored).containsExactly("sent offline");
	}

	/** How many pushes wait in the page's outbox (the client's IndexedDB store). */
	private static long outboxSize(WebDriver browser) {
		Object size = ((JavascriptExecutor) browser).executeAsyncScript("""
				const done = arguments[arguments.length - 1];
				const open = indexedDB.open("a2-outbox", 1);
				open.onupgradeneeded = () => open.result.createObjectStore("outbox", { keyPath: "key" });
				open.onerror = () => done(-1);
				open.onsuccess = () => {
				  const count = open.result.transaction("outbox").objectStore("outbox").count();
				  count.onsuccess = () => { open.result.close(); done(count.result); };
				};""");
		return ((Number) size).longValue();
	}

	private WebDriver chat(String room, String name) {
		WebDriver browser = browser("/?room=" + room + "&name=" + name);
		waitUntil(browser, (b) -> b.findElement(By.id("connection")).getText().equals("live"));
		return browser;
	}

	/**
	 * An operator who opens the console with the credentials in its address (a bookmark, a link from a
	 * runbook) gets a working console: a browser refuses to fetch a relative path from such a page.
	 */
	@Test
	void theConsoleOpenedWithCredentialsInItsAddressShowsTheConsumers() {
		WebDriver console = Chromium.start();
		this.browsers.add(console);
		console.get("http://olga:secret@localhost:" + this.port + "/actuator/a2/console");
		waitUntil(console, (b) -> !b.findElements(By.cssSelector("tr[data-consumer='chat/delivery']")).isEmpty());
		assertThat(console.findElement(By.id("banner")).getText()).isEmpty();
	}

	/**
	 * A page's timer may fire once more after {@code pagehide}, after the client said goodbye: its write
	 * would bring the participant back, for others to see until the TTL runs out.
	 */
	@Test
	void aPresenceWriteAfterThePageIsHiddenDoesNotBringItsParticipantBack() {
		WebDriver page = browser("/a2/client.js");
		Object written = ((JavascriptExecutor) page).executeAsyncScript("""
				const done = arguments[arguments.length - 1];
				import("/a2/client.js").then(async ({ createClient }) => {
				  const room = createClient({ participant: "carol" }).session("chat", "hidden");
				  await room.setPresence({ online: true });
				  window.dispatchEvent(new PageTransitionEvent("pagehide"));   // the goodbye, kept alive
				  await room.setPresence({ typing: true });   // a timer of the page, firing as it goes
				  done("written");
				}, (e) => done(String(e)));""");
		assertThat(written).isEqualTo("written");
		// the goodbye removed online; typing, written after it, must not be there either
		Map<?, ?> carol = waitUntil(page, (b) -> {
			Map<?, ?> participants = JsonPath.read(presence("hidden"), "$.participants");
			Map<?, ?> fields = (Map<?, ?>) participants.get("carol");
			return (fields == null || !fields.containsKey("online")) ? Map.of("fields", (fields != null) ? fields : Map.of()) : null;
		});
		assertThat((Map<?, ?>) carol.get("fields")).as("carol's presence after her page went").isEmpty();
	}

	private String presence(String room) {
		return this.http.get()
			.uri("/a2/chat/sessions/" + room + "/presence")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	private WebDriver browser(String path) {
		WebDriver browser = Chromium.start();
		this.browsers.add(browser);
		browser.get("http://localhost:" + this.port + path);
		return browser;
	}

	/**
	 * Sends a message from the page and answers its index, once the page shows it stored: the client
	 * shows it at once as pending, and gives it its index when the stream brings it back.
	 */
	private long send(WebDriver browser, String text) {
		int before = messages(browser).size();
		browser.findElement(By.id("text")).sendKeys(text, Keys.ENTER);
		return waitUntil(browser, (b) -> {
			List<WebElement> shown = b.findElements(By.cssSelector("#messages li.message"));
			String index = (shown.size() > before) ? shown.get(shown.size() - 1).getDomAttribute("data-index") : null;
			return (index != null) ? Long.parseLong(index) : null;
		});
	}

	private static List<String> messages(WebDriver browser) {
		return browser.findElements(By.cssSelector("#messages li.message"))
			.stream()
			.map((li) -> li.findElement(By.className("author")).getText() + ": " + li.findElement(By.className("text")).getText())
			.toList();
	}

	private static List<String> delivered(WebDriver browser) {
		return browser.findElements(By.cssSelector("#messages li.message.delivered"))
			.stream()
			.map((li) -> li.findElement(By.className("text")).getText())
			.toList();
	}

	private static <T> T waitUntil(WebDriver browser, Function<WebDriver, T> condition) {
		try {
			// a page may replace an element between finding and reading it: the condition is asked again
			return new WebDriverWait(browser, PATIENCE, Duration.ofMillis(50))
				.ignoring(StaleElementReferenceException.class)
				.until(condition::apply);
		}
		catch (RuntimeException ex) {
			Chromium.screenshot(browser, "failed-" + System.currentTimeMillis());
			throw ex;
		}
	}

}
