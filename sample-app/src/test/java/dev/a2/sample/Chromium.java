package dev.a2.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium from the machine's packages ({@code apt-get install -y chromium chromium-driver}
 * on Debian), driven by Selenium. Tests that need it are skipped, saying so, where it is missing.
 */
final class Chromium {

	private static final List<String> BROWSERS = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
			"/usr/bin/google-chrome");

	private static final List<String> DRIVERS = List.of("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver");

	private Chromium() {
	}

	static void assumeInstalled() {
		Assumptions.assumeTrue(browser().isPresent() && driver().isPresent(),
				"no headless Chromium here: install it with 'apt-get install -y chromium chromium-driver' (or set CHROME_BIN "
						+ "and CHROMEDRIVER) to run the browser tests");
	}

	static WebDriver start() {
		ChromeOptions options = new ChromeOptions();
		options.setBinary(browser().orElseThrow());
		// --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
		options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
				"--window-size=1280,860", "--force-device-scale-factor=1");
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(driver().orElseThrow()))
			.build();
		return new ChromeDriver(service, options);
	}

	/** Saves what the browser shows into {@code target/screenshots}, for the README and for failures. */
	static void screenshot(WebDriver browser, String name) {
		try {
			Path directory = Path.of("target", "screenshots");
			Files.createDirectories(directory);
			File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
			Files.copy(shot.toPath(), directory.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
		}
		catch (IOException ex) {
			throw new IllegalStateException("could not save the screenshot " + name, ex);
		}
	}

	private static Optional<String> browser() {
		return find(System.getenv("CHROME_BIN"), BROWSERS);
	}

	private static Optional<String> driver() {
		return find(System.getenv("CHROMEDRIVER"), DRIVERS);
	}

	private static Optional<String> find(String configured, List<String> candidates) {
		if (configured != null && !configured.isBlank()) {
			return Optional.of(configured).filter((path) -> Files.isExecutable(Path.of(path)));
		}
		return candidates.stream().filter((path) -> Files.isExecutable(Path.of(path))).findFirst();
	}

}
