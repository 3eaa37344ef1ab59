package dev.a2.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Java the documentation shows is code that compiles, shown verbatim (tabs as four spaces): the
 * README's new application is {@code com.example.shop.ShopApplication} of this module's tests, which
 * {@code ShopApplicationIntegrationTests} runs; the blocks of docs/web.md are the tagged regions of
 * {@link WebPageSnippets}, and those of the README's API at a glance, docs/consumers.md, docs/aborts-and-takeover.md and
 * docs/ai-replies.md that are whole code the tagged regions of {@link PageSnippets}; the README's consumer test is {@code com.example.shop.ShippingTests}, which runs; docs/testing.md's unit test is a region of {@code AssistantConsumerTests}. The README also names the Spring Boot, Java and A2 versions the build uses, and every dependency on A2 a page shows names its version.
 */
class DocumentationSnippetsTests {

	static final Path ROOT = Path.of("..");

	static final Path SNIPPETS = ROOT.resolve("sample-app/src/test/java/dev/a2/docs/WebPageSnippets.java");

	static final Path PAGE_SNIPPETS = ROOT.resolve("sample-app/src/test/java/dev/a2/docs/PageSnippets.java");

	/** A block, fenced at the margin or indented in a list item; its lines are read without that indentation. */
	private static final Pattern JAVA_BLOCK = Pattern.compile("(?m)^([ ]*)```java\\n(.*?)^\\1```", Pattern.DOTALL);

	@Test
	void theReadmeShowsTheNewApplicationAsItCompiles() throws IOException {
		String source = Files
			.readString(ROOT.resolve("sample-app/src/test/java/com/example/shop/ShopApplication.java"))
			.replace("\t", "    ");
		assertThat(javaBlocks(ROOT.resolve("README.md")))
			.as("a ```java block of README.md equal to ShopApplication.java (tabs as four spaces): copy it over")
			.contains(source);
	}

	@Test
	void theWebPageShowsItsSnippetsAsTheyCompile() throws IOException {
		List<String> blocks = javaBlocks(ROOT.resolve("docs/web.md"));
		for (String tag : List.of("without-spring-boot", "authorizer")) {
			assertThat(blocks).as("a ```java block of docs/web.md equal to the region '%s' of WebPageSnippets.java "
					+ "(tabs as four spaces, its indentation removed): copy it over", tag)
				.contains(region(Files.readString(SNIPPETS), tag));
		}
	}

	/**
	 * A block copied into an application as shown compiles: the effect-key consumer of docs/consumers.md
	 * returned its payload record, which an {@code @A2Consumer} method may not return, and stopped the start-up.
	 */
	@Test
	void theOtherPagesShowTheirSnippetsAsTheyCompile() throws IOException {
		String source = Files.readString(PAGE_SNIPPETS);
		Map<String, List<String>> tags = new LinkedHashMap<>();
		tags.put("README.md", List.of("readme-contract", "readme-session"));
		tags.put("docs/consumers.md", List.of("consumers-builder", "consumers-effect-key", "consumers-latest-state"));
		tags.put("docs/aborts-and-takeover.md", List.of("aborts-annotation", "aborts-returned"));
		tags.put("docs/ai-replies.md", List.of("ai-contract", "ai-assistant", "ai-stream", "ai-refund", "ai-memory"));
		tags.forEach((page, regions) -> {
			List<String> blocks = javaBlocks(ROOT.resolve(page));
			for (String tag : regions) {
				assertThat(blocks).as("a ```java block of %s equal to the region '%s' of PageSnippets.java "
						+ "(tabs as four spaces, its indentation removed): copy it over", page, tag)
					.contains(region(source, tag));
			}
		});
	}

	/**
	 * The README's test is of the README's application, shown whole: a newcomer's copy of the tour's
	 * {@code DeliveryTests}, which it showed before, named a contract and a record the new application
	 * does not have, and no imports.
	 */
	@Test
	void theReadmeShowsItsConsumerTestAsItRuns() throws IOException {
		String source = Files.readString(ROOT.resolve("sample-app/src/test/java/com/example/shop/ShippingTests.java"))
			.replace("\t", "    ");
		assertThat(javaBlocks(ROOT.resolve("README.md")))
			.as("a ```java block of README.md equal to com.example.shop.ShippingTests (tabs as four spaces): copy it over")
			.contains(source);
	}

	@Test
	void theTestingPageShowsItsUnitTestAsItRuns() throws IOException {
		assertThat(javaBlocks(ROOT.resolve("docs/testing.md")))
			.as("a ```java block of docs/testing.md equal to the region 'testing-page' of dev.a2.sample.AssistantConsumerTests")
			.contains(region(Files.readString(ROOT.resolve("sample-app/src/test/java/dev/a2/sample/AssistantConsumerTests.java")),
					"testing-page"));
	}

	@Test
	void theReadmeNamesTheBuildsVersions() throws IOException {
		String pom = Files.readString(ROOT.resolve("pom.xml"));
		String readme = Files.readString(ROOT.resolve("README.md"));
		assertThat(readme).contains("<version>" + tag(pom, "spring-boot.version") + "</version>")
			.contains("<version>" + tag(pom, "version") + "</version>")
			.contains("Java " + tag(pom, "java.version"));
	}

	/**
	 * A2 is not published with a BOM: a dependency on one of its modules copied from a page without a
	 * version does not build ("'dependencies.dependency.version' for dev.a2:a2-test:jar is missing").
	 */
	@Test
	void everyA2DependencyTheDocsShowNamesItsVersion() throws IOException {
		String version = tag(Files.readString(ROOT.resolve("pom.xml")), "version");
		List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
		try (var docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((page) -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		Matcher dependency = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL).matcher("");
		for (Path page : pages) {
			dependency.reset(Files.readString(page));
			while (dependency.find()) {
				String shown = dependency.group(1);
				if (shown.contains("<groupId>dev.a2</groupId>")) {
					assertThat(shown).as("a dependency on A2 shown in %s", page.getFileName())
						.contains("<version>" + version + "</version>");
				}
			}
		}
	}

	static List<String> javaBlocks(Path page) {
		List<String> blocks = new ArrayList<>();
		Matcher block;
		try {
			block = JAVA_BLOCK.matcher(Files.readString(page));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		while (block.find()) {
			String indentation = block.group(1);
			StringBuilder text = new StringBuilder();
			for (String line : block.group(2).split("\n", -1)) {
				text.append(line.startsWith(indentation) ? line.substring(indentation.length()) : line).append('\n');
			}
			blocks.add(text.substring(0, text.length() - 1));
		}
		return blocks;
	}

	/** The lines between {@code // tag::name[]} and {@code // end::name[]}, less their common indentation. */
	static String region(String source, String name) {
		List<String> lines = source.lines().toList();
		int start = lines.indexOf(lines.stream().filter((l) -> l.strip().equals("// tag::" + name + "[]")).findFirst()
			.orElseThrow(() -> new AssertionError("no region " + name)));
		int end = lines.indexOf(lines.stream().filter((l) -> l.strip().equals("// end::" + name + "[]")).findFirst()
			.orElseThrow(() -> new AssertionError("no end of region " + name)));
		List<String> region = lines.subList(start + 1, end);
		int indent = region.stream().filter((l) -> !l.isBlank())
			.mapToInt((l) -> l.length() - l.stripLeading().length()).min().orElse(0);
		StringBuilder text = new StringBuilder();
		for (String line : region) {
			text.append(line.isBlank() ? "" : line.substring(indent).replace("\t", "    ")).append('\n');
		}
		return text.toString();
	}

	private static String tag(String pom, String name) {
		Matcher tag = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(pom);
		assertThat(tag.find()).as("<%s> in pom.xml", name).isTrue();
		return tag.group(1);
	}

}
