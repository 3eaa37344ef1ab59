package dev.a2.autoconfigure;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.WebHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * This module holds auto-configurations, properties and {@code @A2Consumer}'s processing only: the
 * endpoints' request handlers live in the {@code a2-webflux} library, so an application that wires A2
 * itself can mount them without the auto-configurations.
 */
class ModuleContentsTests {

	private static final List<Class<?>> HANDLER_TYPES = List.of(HandlerFunction.class, RouterFunction.class,
			WebHandler.class, WebSocketHandler.class, WebExceptionHandler.class);

	/**
	 * The actuator endpoint is Boot's, so it lives here, and so does its answer to a body Boot's endpoint
	 * machinery cannot read for it: no application mounts these without the auto-configurations.
	 */
	private static final List<Class<?>> ACTUATOR_ANSWERS = List.of(A2EndpointBodyErrors.Reactive.class);

	@Test
	void noClassOfThisModuleHandlesRequests() throws IOException, URISyntaxException {
		Path classes = Path.of(A2AutoConfiguration.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		List<String> names;
		try (Stream<Path> files = Files.walk(classes)) {
			names = files.map((file) -> classes.relativize(file).toString().replace('\\', '/'))
				.filter((file) -> file.endsWith(".class") && !file.endsWith("package-info.class"))
				.map((file) -> file.substring(0, file.length() - ".class".length()).replace('/', '.'))
				.toList();
		}
		assertThat(names).as("the module's classes").contains(A2AutoConfiguration.class.getName());
		assertThat(names.stream()
			.map(ModuleContentsTests::load)
			.filter(ModuleContentsTests::handlesRequests)
			.filter((type) -> !ACTUATOR_ANSWERS.contains(type)))
			.as("request handlers in the auto-configuration module: they belong in a2-webflux")
			.isEmpty();
	}

	private static Class<?> load(String name) {
		try {
			return Class.forName(name, false, ModuleContentsTests.class.getClassLoader());
		}
		catch (ClassNotFoundException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static boolean handlesRequests(Class<?> type) {
		return HANDLER_TYPES.stream().anyMatch((handler) -> handler.isAssignableFrom(type))
				|| AnnotatedElementUtils.hasAnnotation(type, Controller.class)
				|| AnnotatedElementUtils.hasAnnotation(type, ControllerAdvice.class);
	}

}
