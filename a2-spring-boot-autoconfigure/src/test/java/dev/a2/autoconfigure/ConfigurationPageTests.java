package dev.a2.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@code docs/configuration.md} is rendered from the configuration metadata the build generates from
 * {@link A2Properties} (and the {@code a2} actuator endpoint): a property added, removed or redocumented
 * without regenerating the page fails here. {@code -Da2.docs.regenerate=true} writes the page instead.
 */
class ConfigurationPageTests {

	static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

	static final Path PAGE = Path.of("..", "docs", "configuration.md");

	static final String REGENERATE = "./mvnw -B -q -pl a2-spring-boot-autoconfigure -am test "
			+ "-Dtest=ConfigurationPageTests -Dsurefire.failIfNoSpecifiedTests=false -Da2.docs.regenerate=true";

	private static final Pattern INLINE_TAG = Pattern.compile("\\{@(code|literal|link|linkplain) ");

	@Test
	void thePageSaysWhatTheMetadataSays() throws IOException {
		String rendered = render(JsonMapper.builder().build().readTree(Files.readString(METADATA)));
		if (Boolean.getBoolean("a2.docs.regenerate")) {
			Files.writeString(PAGE, rendered, StandardCharsets.UTF_8);
			return;
		}
		String page = Files.exists(PAGE) ? Files.readString(PAGE) : "";
		if (!page.equals(rendered)) {
			fail("docs/configuration.md does not match the configuration metadata (a property was added, removed "
					+ "or its Javadoc changed), first at:\n  " + firstDifference(page, rendered)
					+ "\nRegenerate the page from the repository's root with:\n  " + REGENERATE);
		}
	}

	@Test
	void everyPropertyHasARowWithItsDefaultAndMeaning() throws IOException {
		JsonNode metadata = JsonMapper.builder().build().readTree(Files.readString(METADATA));
		String rendered = render(metadata);
		for (JsonNode property : metadata.get("properties")) {
			assertThat(rendered).contains("| `" + property.get("name").asString() + "` | ");
		}
		assertThat(rendered).contains("| `a2.drain.lease` | `30s` |")
			.contains("| `a2.web.max-string-length` | `65536` |")
			.contains("| `a2.web.allowed-origins` | (none) |")
			.contains("| `a2.store.initialize-schema` | `always` |")
			.contains("One of `always`, `never`.")
			.contains("`<base-path>/{contract}/socket`")
			.doesNotContain("{@");
	}

	@Test
	void aPropertyAddedChangesThePage() throws IOException {
		JsonNode metadata = JsonMapper.builder().build().readTree(Files.readString(METADATA));
		String before = render(metadata);
		((ArrayNode) metadata.get("properties")).addObject()
			.put("name", "a2.web.new-setting")
			.put("type", "java.lang.Integer")
			.put("description", "A setting added later.")
			.put("defaultValue", 7);
		assertThat(render(metadata)).isNotEqualTo(before)
			.contains("| `a2.web.new-setting` | `7` | A setting added later. |");
	}

	private static String firstDifference(String page, String rendered) {
		List<String> was = page.lines().toList();
		List<String> is = rendered.lines().toList();
		for (int i = 0; i < Math.max(was.size(), is.size()); i++) {
			String old = (i < was.size()) ? was.get(i) : "(end of page)";
			String now = (i < is.size()) ? is.get(i) : "(end of page)";
			if (!old.equals(now)) {
				return "line " + (i + 1) + ": the page has\n    " + old + "\n  the metadata gives\n    " + now;
			}
		}
		return "(line endings)";
	}

	static String render(JsonNode metadata) {
		Map<String, List<JsonNode>> byGroup = new TreeMap<>();
		List<String> groups = new ArrayList<>();
		for (JsonNode group : metadata.get("groups")) {
			groups.add(group.get("name").asString());
		}
		groups.sort(Comparator.comparing(String::length).reversed());
		for (JsonNode property : metadata.get("properties")) {
			String name = property.get("name").asString();
			String group = groups.stream().filter((g) -> name.startsWith(g + ".")).findFirst().orElse("");
			byGroup.computeIfAbsent(group, (g) -> new ArrayList<>()).add(property);
		}
		StringBuilder page = new StringBuilder();
		page.append("# Configuration\n\n")
			.append("<!-- Generated from a2-spring-boot-autoconfigure's configuration metadata (A2Properties' Javadoc) by\n")
			.append("     ConfigurationPageTests; do not edit by hand. Regenerate with:\n     ")
			.append(REGENERATE)
			.append(" -->\n\n")
			.append("Every property A2's auto-configuration reads, with its default. Durations take `30s`, `5m` or ISO-8601\n")
			.append("(`PT30S`); sizes take `256KB`. Applications that build `A2Server` and `A2Endpoints` themselves set the\n")
			.append("same things on their builders. A time or count that cannot work (a sweep interval of 0, a negative\n")
			.append("presence TTL, no store threads) stops the start-up with a message naming the property, its value and\n")
			.append("what it must be.\n\n")
			.append("Beside these, A2 uses the application's own `DataSource` (`spring.datasource.*`). Its migrations are\n")
			.append("recorded in their own table, `a2_schema_history`, beside the application's Flyway or Liquibase history,\n")
			.append("and A2's stores start after every database initializer. A pool that hands out connections without\n")
			.append("auto-commit (`spring.datasource.hikari.auto-commit=false`) is fine: every write A2 makes runs in a\n")
			.append("transaction or commits explicitly. `spring.datasource.hikari.connection-timeout` is how long a request\n")
			.append("waits for a connection when the pool is exhausted before it answers `STORE_UNAVAILABLE` (503).\n");
		byGroup.forEach((group, properties) -> {
			page.append("\n## `").append(group).append("`\n\n");
			page.append("| property | default | meaning |\n|---|---|---|\n");
			properties.sort(Comparator.comparing((JsonNode p) -> p.get("name").asString()));
			for (JsonNode property : properties) {
				page.append("| `")
					.append(property.get("name").asString())
					.append("` | ")
					.append(defaultValue(property))
					.append(" | ")
					.append(description(property))
					.append(" |\n");
			}
		});
		return page.toString();
	}

	private static String defaultValue(JsonNode property) {
		JsonNode value = property.get("defaultValue");
		if (value == null || value.isNull()) {
			return "(none)";
		}
		if (!value.isArray()) {
			return "`" + value.asString() + "`";
		}
		List<String> values = new ArrayList<>();
		value.forEach((element) -> values.add(element.asString()));
		return "`" + String.join(",", values) + "`";
	}

	private static String description(JsonNode property) {
		JsonNode description = property.get("description");
		String text = (description == null) ? "" : description.asString();
		text = inlineTags(text).replace("|", "\\|").replaceAll("\\s+", " ").strip();
		String values = enumValues(property.get("type").asString());
		return values.isEmpty() ? text : text + " " + values;
	}

	/** Javadoc's {@code {@code …}} and {@code {@link …}} as Markdown code, braces inside them balanced. */
	static String inlineTags(String text) {
		StringBuilder out = new StringBuilder();
		Matcher tag = INLINE_TAG.matcher(text);
		int from = 0;
		while (tag.find(from)) {
			int depth = 1;
			int end = tag.end();
			while (end < text.length() && depth > 0) {
				char c = text.charAt(end++);
				depth += (c == '{') ? 1 : (c == '}') ? -1 : 0;
			}
			String content = text.substring(tag.end(), end - 1).strip();
			if (tag.group(1).startsWith("link") && content.contains(" ")) {
				content = content.substring(content.indexOf(' ') + 1);
			}
			out.append(text, from, tag.start()).append('`').append(content).append('`');
			from = end;
		}
		return out.append(text.substring(from)).toString();
	}

	/** The values of an enum-typed property, which the metadata leaves to the type. */
	private static String enumValues(String type) {
		try {
			Class<?> target = Class.forName(type, false, ConfigurationPageTests.class.getClassLoader());
			if (!target.isEnum()) {
				return "";
			}
			List<String> names = new ArrayList<>();
			for (Object constant : target.getEnumConstants()) {
				names.add("`" + ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-') + "`");
			}
			return "One of " + String.join(", ", names) + ".";
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return "";
		}
	}

}
