/**
 * A2's HTTP and WebSocket endpoints on Spring WebFlux: push, history, state, presence, clear, the
 * SSE stream and the socket, each asking the {@link dev.a2.web.A2Authorizer}.
 */
@NullMarked
package dev.a2.web;

import org.jspecify.annotations.NullMarked;
