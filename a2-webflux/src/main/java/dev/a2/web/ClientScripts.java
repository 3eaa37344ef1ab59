package dev.a2.web;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import reactor.core.publisher.Mono;

import org.springframework.http.CacheControl;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Serves A2's JavaScript client ({@code a2-client}, copied into this jar by the build) at
 * {@code {basePath}/client.js} and its sibling modules, so a page imports it with no tooling. The
 * scripts are revalidated on each use (an ETag of their content), so a new version of A2 is picked
 * up at once and an unchanged one costs a 304.
 */
final class ClientScripts {

	static final Set<String> FILES = Set.of("client.js", "react.js", "client.d.ts", "react.d.ts");

	private static final MediaType JAVASCRIPT = MediaType.parseMediaType("text/javascript;charset=UTF-8");

	private static final MediaType TYPESCRIPT = MediaType.parseMediaType("application/typescript;charset=UTF-8");

	private final Map<String, Script> loaded = new ConcurrentHashMap<>();

	private record Script(byte[] bytes, String etag) {
	}

	Mono<ServerResponse> serve(ServerRequest request) {
		String file = request.pathVariable("file");
		if (!FILES.contains(file)) {
			// in A2's error shape, as every path under the base path answers
			return Mono.error(new A2Exception(ErrorCode.NOT_FOUND, request.path() + " is no file of A2's client: it serves "
					+ "client.js, react.js, client.d.ts and react.d.ts"));
		}
		Script script = this.loaded.computeIfAbsent(file, ClientScripts::load);
		if (request.headers().header(HttpHeaders.IF_NONE_MATCH).stream()
			.anyMatch((tags) -> tags.contains(script.etag()) || tags.trim().equals("*"))) {
			return ServerResponse.status(HttpStatus.NOT_MODIFIED).eTag(script.etag()).cacheControl(CacheControl.noCache()).build();
		}
		return ServerResponse.ok()
			.contentType(file.endsWith(".js") ? JAVASCRIPT : TYPESCRIPT)
			.cacheControl(CacheControl.noCache())
			.eTag(script.etag())
			.header("X-Content-Type-Options", "nosniff")
			.bodyValue(script.bytes());
	}

	private static Script load(String file) {
		try (InputStream in = ClientScripts.class.getResourceAsStream("client/" + file)) {
			if (in == null) {
				throw new A2Exception(ErrorCode.INTERNAL, "the client script " + file + " is not in the a2-webflux jar; "
						+ "it is copied from a2-client/src when the jar is built");
			}
			byte[] bytes = in.readAllBytes();
			String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 16);
			return new Script(bytes, "\"" + hash + "\"");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
