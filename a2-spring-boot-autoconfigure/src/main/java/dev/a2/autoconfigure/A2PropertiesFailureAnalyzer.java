package dev.a2.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports A2's properties that cannot work in the "APPLICATION FAILED TO START" box, one line each, as
 * Spring Boot reports a value that does not bind: without it the message is the last of a chain of bean
 * creation failures, far to the right of a stack trace that names whichever bean first needed A2.
 */
class A2PropertiesFailureAnalyzer extends AbstractFailureAnalyzer<A2PropertiesException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, A2PropertiesException cause) {
		StringBuilder description = new StringBuilder("A2 cannot start with these settings:\n");
		cause.problems().forEach((problem) -> description.append("\n    ").append(problem));
		return new FailureAnalysis(description.toString(),
				"Change the properties named above; docs/configuration.md lists each with its default.", cause);
	}

}
