package dev.a2.web;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import dev.a2.A2Exception;
import dev.a2.wire.Wire;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * A push to {@link A2Servlet} served on the container's thread from start to end, as a Spring MVC
 * controller serves a request: the body read, the events stored, the answer written, in place of
 * Spring's reactive adapter with its asynchronous request and its hand-offs between threads, which cost
 * a push on Tomcat more CPU than the push itself. The work is the push route's own
 * ({@link SessionHandlers#push(java.security.Principal, String, String, byte[])}), checks and errors
 * included; a request it does not take as it is (another method or path, a {@code ;} in the path) goes to
 * the routes.
 */
final class ServletPush {

	private static final PathPattern PUSH = PathPatternParser.defaultInstance.parse(A2Routes.SESSION + "/events");

	private final SessionHandlers sessions;

	private final Wire wire;

	ServletPush(SessionHandlers sessions, Wire wire) {
		this.sessions = sessions;
		this.wire = wire;
	}

	/** Serves {@code request} if it is a push, and answers whether it did. */
	boolean serve(HttpServletRequest request, HttpServletResponse response) throws IOException {
		if (!"POST".equals(request.getMethod())) {
			return false;
		}
		String uri = request.getRequestURI();
		String servlet = request.getContextPath() + request.getServletPath();
		if (!uri.startsWith(servlet) || uri.indexOf(';') >= 0) {
			return false;
		}
		PathPattern.PathMatchInfo match = PUSH.matchAndExtract(PathContainer.parsePath(uri.substring(servlet.length())));
		if (match == null) {
			return false;
		}
		String json;
		int status;
		try {
			this.sessions.checkBody(request.getContentType(), request.getContentLengthLong());
			byte[] body = read(request.getInputStream());
			json = this.sessions.push(Access.caller(request.getUserPrincipal()), match.getUriVariables().get("contract"),
					match.getUriVariables().get("session"), body);
			status = 200;
		}
		catch (RuntimeException ex) {
			// an IOException (the client went away mid-body) is the container's: nobody is left to answer
			A2Exception error = WebErrors.asA2(ex, this.wire);
			discardUnread(request.getInputStream());
			json = this.wire.error(error.code(), String.valueOf(error.getMessage()));
			status = error.code().httpStatus();
		}
		byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
		response.setStatus(status);
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		response.setContentLength(bytes.length);
		response.getOutputStream().write(bytes);
		return true;
	}

	/**
	 * Reads what is left of a refused push's body before the error answers, as the routes do and as far
	 * ({@link A2Routes#unreadBodyBound(long)}): Jetty closes the connection of an answer whose request's
	 * body was left unread, without saying so, and the client's next request on it is lost.
	 */
	private void discardUnread(InputStream in) {
		try {
			long left = A2Routes.unreadBodyBound(this.wire.limits().maxBytes());
			byte[] buffer = new byte[8192];
			int read;
			while (left > 0 && (read = in.read(buffer, 0, (int) Math.min(buffer.length, left))) >= 0) {
				left -= read;
			}
		}
		catch (IOException ex) {
			// the client is gone: the answer finds out
		}
	}

	/** The body, refused as too large as soon as it passes the push limit (a chunked body has no length to check first). */
	private byte[] read(InputStream in) throws IOException {
		int max = this.wire.limits().maxBytes();
		byte[] body = in.readNBytes(max + 1);
		if (body.length > max) {
			throw this.wire.tooLarge("the body", max + 1L);
		}
		return body;
	}

}
