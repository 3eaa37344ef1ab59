package dev.a2.web;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Holds {@link A2Servlet}'s answer back until the filters in front of it have returned: register it
 * first of all filters at {@code {basePath}/*} (the starter does, as {@code a2ServletGate}).
 * <p>
 * A2's servlet answers on threads of its own, while the container's thread goes back out through the
 * filters; a filter that writes headers on the way out, as Spring Security's {@code HeaderWriterFilter}
 * does, then wrote them into the same response at the same moment as A2 committed it. A servlet
 * container's headers are not made to be written from two threads: a stream's request could fail with
 * a {@code NullPointerException} in Tomcat's header table, its client left without an answer (seen for
 * 2 of 200 streams opened at once). A filter expects to find the response as the servlet left it when
 * the chain returns, as with any servlet that answers on the container's thread; with this filter it
 * does. The socket's handshake is not held back: the container upgrades the connection itself.
 */
public final class A2ServletGate implements Filter {

	/** The request attribute that completes once the filters have returned. */
	static final String RETURNED = A2ServletGate.class.getName() + ".returned";

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		if (request.getAttribute(RETURNED) != null || isUpgrade(request)) {
			chain.doFilter(request, response);
			return;
		}
		CompletableFuture<Void> returned = new CompletableFuture<>();
		request.setAttribute(RETURNED, returned);
		try {
			chain.doFilter(request, response);
		}
		finally {
			returned.complete(null);
		}
	}

	private static boolean isUpgrade(ServletRequest request) {
		return request instanceof HttpServletRequest http && http.getHeader("Upgrade") != null;
	}

}
