package dev.a2.testkit;

import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/** Starts each test of an {@link A2Test} with no faults and an empty journal, and lets stalled runs go after it. */
final class A2TestExecutionListener extends AbstractTestExecutionListener {

	@Override
	public int getOrder() {
		return 5000;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), A2Test.class)) {
			testContext.getApplicationContext().getBean(A2TestKit.class).reset();
		}
	}

	@Override
	public void afterTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), A2Test.class)
				&& testContext.hasApplicationContext()) {
			testContext.getApplicationContext().getBean(A2TestKit.class).releaseStalled();
		}
	}

}
