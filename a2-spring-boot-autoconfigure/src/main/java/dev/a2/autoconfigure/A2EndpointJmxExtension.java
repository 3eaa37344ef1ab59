package dev.a2.autoconfigure;

import dev.a2.ErrorCode;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.jmx.annotation.EndpointJmxExtension;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code a2} endpoint over JMX: what it answers over HTTP as the body, its errors in A2's
 * {@code {"error":{"code","message"}}} shape. Without it a JMX client got the endpoint's web responses
 * whole ({@code {body, status, contentType:{charset, concrete, subtype…}}}), and operations whose
 * arguments included the request's principal and the HTTP path's {@code "redrive"}, which a JMX client
 * has no value for. JMX has no caller: the {@code A2Authorizer} is asked about {@code null}
 * (docs/security.md).
 */
@EndpointJmxExtension(endpoint = A2Endpoint.class)
public class A2EndpointJmxExtension {

	private final A2Endpoint endpoint;

	public A2EndpointJmxExtension(A2Endpoint endpoint) {
		this.endpoint = endpoint;
	}

	/** Contracts, consumers with their pending work, lag and dead letters, and whether this instance drains. */
	@ReadOperation
	public @Nullable Object overview() {
		return body(this.endpoint.overview(null));
	}

	/** {@code dead-letters} (contract, session, consumer, limit) or {@code events} (contract, session, after, limit). */
	@ReadOperation
	public @Nullable Object part(String part, @Nullable String contract, @Nullable String session,
			@Nullable String consumer, @Nullable String after, @Nullable String limit) {
		try {
			return body(this.endpoint.part(part, contract, session, consumer, after, limit, null));
		}
		catch (InvalidEndpointRequestException ex) {
			return A2Endpoint.errorBody(ErrorCode.INVALID_PAYLOAD.name(),
					"part must be \"dead-letters\" or \"events\", was '" + part + "'");
		}
	}

	/** Retries or skips a dead letter: {@code {"redriven":true}}, or an error as over HTTP. */
	@WriteOperation
	public @Nullable Object redrive(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			@Nullable String index, @Nullable String action) {
		return body(this.endpoint.redrive("redrive", contract, session, consumer, index, action, null));
	}

	private static @Nullable Object body(WebEndpointResponse<Object> response) {
		return response.getBody();
	}

}
