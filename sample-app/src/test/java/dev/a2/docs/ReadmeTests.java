package dev.a2.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's new application is a real source file, {@code com.example.shop.ShopApplication} of this
 * module's tests, which compiles and runs ({@code ShopApplicationIntegrationTests}); the README must
 * show it verbatim (tabs as four spaces), and name the Spring Boot and A2 versions the build uses.
 */
class ReadmeTests {

	static final Path ROOT = Path.of("..");

	private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

	@Test
	void theNewApplicationIsShownAsItCompiles() throws IOException {
		String source = Files
			.readString(ROOT.resolve("sample-app/src/test/java/com/example/shop/ShopApplication.java"))
			.replace("\t", "    ");
		assertThat(javaBlocks(Files.readString(ROOT.resolve("README.md"))))
			.as("a ```java block of README.md equal to ShopApplication.java (tabs as four spaces): copy it over")
			.contains(source);
	}

	@Test
	void theVersionsAreTheBuildsOwn() throws IOException {
		String pom = Files.readString(ROOT.resolve("pom.xml"));
		String readme = Files.readString(ROOT.resolve("README.md"));
		assertThat(readme).contains("<version>" + tag(pom, "spring-boot.version") + "</version>")
			.contains("<version>" + tag(pom, "version") + "</version>")
			.contains("Java " + tag(pom, "java.version"));
	}

	private static List<String> javaBlocks(String markdown) {
		List<String> blocks = new ArrayList<>();
		Matcher block = JAVA_BLOCK.matcher(markdown);
		while (block.find()) {
			blocks.add(block.group(1));
		}
		return blocks;
	}

	private static String tag(String pom, String name) {
		Matcher tag = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(pom);
		assertThat(tag.find()).as("<%s> in pom.xml", name).isTrue();
		return tag.group(1);
	}

}
