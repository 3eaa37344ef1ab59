package dev.a2.web;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * An {@link A2Exception} thrown from an application's own controller (MVC or WebFlux) answers the
 * status of its code with a problem body, {@code code} among its properties, instead of a 500.
 * Ordered last, so the application's own advice comes first.
 */
@RestControllerAdvice
public class A2ExceptionHandling {

	/** The problem body of the exception, with the status of its code. */
	@ExceptionHandler(A2Exception.class)
	public ResponseEntity<ProblemDetail> a2Exception(A2Exception ex) {
		ProblemDetail problem = problem(ex);
		return ResponseEntity.status(problem.getStatus()).body(problem);
	}

	/** The problem body of an A2 failure. */
	public static ProblemDetail problem(A2Exception ex) {
		ErrorCode code = ex.code();
		HttpStatus status = (code.httpStatus() > 0) ? HttpStatus.valueOf(code.httpStatus()) : HttpStatus.INTERNAL_SERVER_ERROR;
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, String.valueOf(ex.getMessage()));
		problem.setTitle(code.name());
		problem.setProperty("code", code.name());
		return problem;
	}

}
