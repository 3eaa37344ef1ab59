package dev.a2.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link and image of README.md, CHANGELOG.md and the pages under docs/ leads somewhere: the
 * file exists in the repository, and a {@code #fragment} names a heading of its page (GitHub's anchors).
 */
class DocumentationLinksTests {

	static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

	private static final Pattern FENCE = Pattern.compile("(?ms)^```.*?^```");

	private static final Pattern INLINE_CODE = Pattern.compile("`[^`\\n]*`");

	@Test
	void everyRelativeLinkResolves() throws IOException {
		List<String> broken = new ArrayList<>();
		for (Path page : pages()) {
			for (String target : links(page)) {
				String problem = problem(page, target);
				if (problem != null) {
					broken.add(ROOT.relativize(page) + ": (" + target + ") " + problem);
				}
			}
		}
		assertThat(broken).as("broken links").isEmpty();
	}

	@Test
	void aBrokenLinkIsFound() throws IOException {
		Path readme = ROOT.resolve("README.md");
		assertThat(problem(readme, "docs/no-such-page.md")).isEqualTo("no such file");
		assertThat(problem(readme, "docs/configuration.md#no-such-heading")).startsWith("no heading");
		assertThat(problem(readme, "docs/configuration.md#a2drain")).isNull();
		assertThat(links(readme)).isNotEmpty();
	}

	static List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
		try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

	static List<String> links(Path page) throws IOException {
		String text = INLINE_CODE.matcher(FENCE.matcher(Files.readString(page)).replaceAll("")).replaceAll("");
		List<String> links = new ArrayList<>();
		Matcher link = LINK.matcher(text);
		while (link.find()) {
			String target = link.group(1);
			if (!target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
				links.add(target);
			}
		}
		return links;
	}

	/** What is wrong with a relative link of a page, or {@code null} when it resolves. */
	static String problem(Path page, String target) throws IOException {
		int hash = target.indexOf('#');
		String file = (hash < 0) ? target : target.substring(0, hash);
		Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
		if (!resolved.startsWith(ROOT)) {
			return "outside the repository";
		}
		String relative = ROOT.relativize(resolved).toString().replace('\\', '/');
		if (!Files.exists(resolved)) {
			return "no such file";
		}
		if (hash < 0 || !relative.endsWith(".md")) {
			return null;
		}
		String fragment = target.substring(hash + 1);
		Set<String> anchors = anchors(resolved);
		return anchors.contains(fragment) ? null : "no heading with anchor #" + fragment + " in " + relative;
	}

	/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens. */
	static Set<String> anchors(Path page) throws IOException {
		Set<String> anchors = new HashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		String text = FENCE.matcher(Files.readString(page)).replaceAll("");
		for (String line : text.lines().toList()) {
			if (line.matches("^#{1,6} .*")) {
				String anchor = line.replaceFirst("^#+ ", "")
					.strip()
					.toLowerCase(Locale.ROOT)
					.replaceAll("[^\\p{L}\\p{N} _-]", "")
					.replace(' ', '-');
				int times = seen.merge(anchor, 1, Integer::sum);
				anchors.add((times == 1) ? anchor : anchor + "-" + (times - 1));
			}
		}
		return anchors;
	}

}
