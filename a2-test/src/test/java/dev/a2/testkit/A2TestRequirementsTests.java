package dev.a2.testkit;

import java.io.File;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code @A2Test} class on a test class path without {@code spring-boot-test} and {@code spring-test}
 * (only {@code a2-test} added, as a page once showed it) fails saying what to add, where it ran with its
 * kit {@code null} and failed with a {@code NullPointerException}. The class is run by the JUnit Platform
 * in a class loader of its own, on this test's class path without those two jars.
 */
class A2TestRequirementsTests {

	@Test
	void anA2TestWithoutSpringBootsTestSupportFailsSayingWhatToAdd() throws Exception {
		List<Throwable> failures = runWithoutSpringTest(KitWithoutSpringTestFixture.class.getName());

		assertThat(failures).hasSize(1);
		Throwable failure = failures.get(0);
		assertThat(failure.getClass().getName()).isEqualTo("org.junit.jupiter.api.extension.ExtensionConfigurationException");
		assertThat(failure.getMessage()).contains("@A2Test on KitWithoutSpringTestFixture needs Spring Boot's test support")
			.contains("add org.springframework.boot:spring-boot-starter-test in test scope");
	}

	/** The failures of a test class run by the JUnit Platform in a class loader without Spring's test jars. */
	private static List<Throwable> runWithoutSpringTest(String testClass) throws Exception {
		String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
		List<URL> urls = new ArrayList<>();
		int removed = 0;
		for (String entry : classPath.split(File.pathSeparator)) {
			String name = Path.of(entry).getFileName().toString();
			if (name.startsWith("spring-test-") || name.startsWith("spring-boot-test-")) {
				removed++;
				continue;
			}
			urls.add(Path.of(entry).toUri().toURL());
		}
		assertThat(removed).as("spring-test and spring-boot-test on this test's class path %s", classPath).isEqualTo(2);
		Thread thread = Thread.currentThread();
		ClassLoader previous = thread.getContextClassLoader();
		try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
			thread.setContextClassLoader(loader);
			Object selector = loader.loadClass("org.junit.platform.engine.discovery.DiscoverySelectors")
				.getMethod("selectClass", String.class)
				.invoke(null, testClass);
			Object selectors = Array.newInstance(loader.loadClass("org.junit.platform.engine.DiscoverySelector"), 1);
			Array.set(selectors, 0, selector);
			Class<?> requestBuilder = loader.loadClass("org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder");
			Object builder = requestBuilder.getMethod("request").invoke(null);
			requestBuilder.getMethod("selectors", selectors.getClass()).invoke(builder, selectors);
			Object request = requestBuilder.getMethod("build").invoke(builder);
			Object listener = loader.loadClass("org.junit.platform.launcher.listeners.SummaryGeneratingListener")
				.getConstructor()
				.newInstance();
			Object listeners = Array.newInstance(loader.loadClass("org.junit.platform.launcher.TestExecutionListener"), 1);
			Array.set(listeners, 0, listener);
			Object launcher = loader.loadClass("org.junit.platform.launcher.core.LauncherFactory").getMethod("create").invoke(null);
			loader.loadClass("org.junit.platform.launcher.Launcher")
				.getMethod("execute", loader.loadClass("org.junit.platform.launcher.LauncherDiscoveryRequest"), listeners.getClass())
				.invoke(launcher, request, listeners);
			Object summary = listener.getClass().getMethod("getSummary").invoke(listener);
			Class<?> summaryType = loader.loadClass("org.junit.platform.launcher.listeners.TestExecutionSummary");
			Method exception = loader.loadClass("org.junit.platform.launcher.listeners.TestExecutionSummary$Failure")
				.getMethod("getException");
			List<Throwable> failures = new ArrayList<>();
			for (Object failure : (List<?>) summaryType.getMethod("getFailures").invoke(summary)) {
				failures.add((Throwable) exception.invoke(failure));
			}
			long found = (long) summaryType.getMethod("getContainersFoundCount").invoke(summary);
			assertThat(found).as("containers found running %s", testClass).isGreaterThan(1);
			return failures;
		}
		finally {
			thread.setContextClassLoader(previous);
		}
	}

}
