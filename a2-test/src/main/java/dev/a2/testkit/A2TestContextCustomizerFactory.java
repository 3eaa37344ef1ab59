package dev.a2.testkit;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;

/** Gives the context of an {@link A2Test} its database, clock, kit and settings. */
final class A2TestContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		A2Test test = TestContextAnnotationUtils.findMergedAnnotation(testClass, A2Test.class);
		return (test != null) ? new A2TestContextCustomizer(testClass, List.of(test.consumers())) : null;
	}

}
