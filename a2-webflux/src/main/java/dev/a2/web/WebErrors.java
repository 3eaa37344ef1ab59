package dev.a2.web;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.wire.Wire;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.util.DisconnectedClientHelper;

/** Every failure of A2's routes as {@code {"error":{"code","message"}}} with the status of its code. */
final class WebErrors {

	private static final Log logger = LogFactory.getLog(WebErrors.class);

	private WebErrors() {
	}

	/** The A2 failure a throwable stands for; one A2 does not know is logged and answered as internal. */
	static A2Exception asA2(Throwable ex, Wire wire) {
		if (ex instanceof A2Exception a2) {
			return a2;
		}
		if (ex instanceof DataBufferLimitException) {
			return wire.tooLarge("the body", wire.limits().maxBytes() + 1L);
		}
		if (ex instanceof ResponseStatusException status && status.getStatusCode().is4xxClientError()) {
			return new A2Exception(ErrorCode.INVALID_PAYLOAD, String.valueOf(status.getReason()));
		}
		if (DisconnectedClientHelper.isClientDisconnectedException(ex)) {
			// a client that closed its connection mid-request is no failure of the server's: any client could
			// fill the log with ERRORs so, and the answer reaches no one
			if (logger.isDebugEnabled()) {
				logger.debug("A client went away before its request was answered: " + ex);
			}
			return new A2Exception(ErrorCode.INVALID_PAYLOAD, "the client went away before its request was answered", ex);
		}
		logger.error("An A2 endpoint failed unexpectedly", ex);
		return new A2Exception(ErrorCode.INTERNAL, "the server failed unexpectedly; its log has the details", ex);
	}

	static Mono<ServerResponse> response(Throwable ex, Wire wire) {
		A2Exception error = asA2(ex, wire);
		return ServerResponse.status(HttpStatus.valueOf(error.code().httpStatus()))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(wire.error(error.code(), String.valueOf(error.getMessage())));
	}

}
