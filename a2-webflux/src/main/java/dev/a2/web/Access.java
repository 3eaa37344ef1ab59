package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.NewEvent;
import dev.a2.PresenceValue;
import dev.a2.PresenceWrite;
import dev.a2.Session;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.OAuth2Token;
import org.springframework.util.ClassUtils;

/**
 * Opens the session a caller asks for, in the order that tells a stranger nothing: the authorizer
 * first, then whether the contract and session exist, then the rules no authorizer lifts (server-only
 * event types, presence as oneself). Blocks when the authorizer does: call it on a store thread.
 */
final class Access {

	private static final Log logger = LogFactory.getLog(Access.class);

	private static final boolean SPRING_SECURITY = ClassUtils.isPresent(
			"org.springframework.security.authentication.AnonymousAuthenticationToken", Access.class.getClassLoader());

	private static final boolean OAUTH2 = SPRING_SECURITY
			&& ClassUtils.isPresent("org.springframework.security.oauth2.core.OAuth2Token", Access.class.getClassLoader());

	/**
	 * How long a stream or socket opened with credentials already past their expiry stays open. A token
	 * decoder accepts a token a little after its expiry (Spring Security's JWT decoder, 60 s of clock
	 * skew by default): ended at once, such a stream would be reopened with the same token and ended
	 * again, in a loop, until the decoder refuses it.
	 */
	static final Duration EXPIRED_GRACE = Duration.ofMinutes(1);

	private final A2Server server;

	private final A2Authorizer authorizer;

	private final PresenceParticipant participants;

	private final Duration reauthorizeEvery;

	/** Until when ({@link System#nanoTime()}) a failed re-check is logged at DEBUG, not WARN. */
	private final AtomicLong quietUntil = new AtomicLong(System.nanoTime());

	/** Failed re-checks logged at DEBUG since the last WARN. */
	private final AtomicInteger unsaid = new AtomicInteger();

	Access(A2Server server, A2Authorizer authorizer, A2WebSettings settings) {
		this.server = server;
		this.authorizer = authorizer;
		this.participants = settings.presenceParticipant();
		this.reauthorizeEvery = settings.reauthorizeEvery();
	}

	/** The session, once the caller may do what it asks there and what it writes keeps the rules. */
	Session open(@Nullable Principal caller, A2Access access) {
		check(this.authorizer, caller, access);
		Session session = this.server.session(String.valueOf(access.contract()), String.valueOf(access.session()));
		Contract contract = session.contract();
		for (NewEvent event : access.events()) {
			if (contract.isServerOnly(event.type())) {
				throw new A2Exception(ErrorCode.FORBIDDEN, "event type '" + event.type() + "' is written by the server only: "
						+ "clients may not push it");
			}
		}
		PresenceWrite presence = access.presence();
		if (presence != null && caller != null && this.participants == PresenceParticipant.CALLER
				&& !presence.participant().equals(caller.getName())) {
			throw new A2Exception(ErrorCode.FORBIDDEN, "'" + caller.getName() + "' may write presence only as participant '"
					+ caller.getName() + "', not as '" + presence.participant() + "'");
		}
		return session;
	}

	/**
	 * How long a stream or socket the caller opens now may stay open, or {@code null} for as long as it
	 * lasts: until the caller's credentials expire ({@link A2Authorizer#validUntil(Principal)}), or
	 * {@link #EXPIRED_GRACE} when they have already.
	 */
	@Nullable Duration openFor(@Nullable Principal caller) {
		return openFor(this.authorizer.validUntil(caller), this.server.clock().instant());
	}

	static @Nullable Duration openFor(@Nullable Instant validUntil, Instant now) {
		if (validUntil == null) {
			return null;
		}
		Duration left = Duration.between(now, validUntil);
		return (left.isNegative() || left.isZero()) ? EXPIRED_GRACE : left;
	}

	/** The expiry of the OAuth2 token the caller authenticated with, or {@code null} for any other caller. */
	static @Nullable Instant tokenExpiry(@Nullable Principal caller) {
		return (caller != null && OAUTH2) ? OAuth2Tokens.expiry(caller) : null;
	}

	/** Spring Security's OAuth2 types, loaded only when they are present. */
	private static final class OAuth2Tokens {

		/** A resource server's authentications (a JWT's, an introspected token's) hold the token as their credentials. */
		static @Nullable Instant expiry(Principal caller) {
			return (caller instanceof Authentication authentication && authentication.getCredentials() instanceof OAuth2Token token)
					? token.getExpiresAt() : null;
		}

	}

	/**
	 * The caller of a request or socket: its principal, or {@code null} when it is anonymous. Spring
	 * Security's anonymous authentication ({@code ServerHttpSecurity.anonymous()}) is a principal named
	 * {@code anonymousUser}, but no one: refused, it is told to log in (401), never that
	 * "anonymousUser" may not (403), and it does not write presence as a participant of that name.
	 */
	static @Nullable Principal caller(@Nullable Principal principal) {
		return (principal != null && SPRING_SECURITY && SpringSecurity.isAnonymous(principal)) ? null : principal;
	}

	/** Spring Security's types, loaded only when it is present. */
	private static final class SpringSecurity {

		static boolean isAnonymous(Principal principal) {
			return principal instanceof AnonymousAuthenticationToken;
		}

	}

	/**
	 * Completes with the refusal ({@code FORBIDDEN}, {@code UNAUTHORIZED} for an anonymous caller) once the
	 * authorizer no longer lets the caller read the session of an open stream or socket subscription, which
	 * then ends; never while it does. It asks every {@link A2WebSettings#reauthorizeEvery()}, on the store
	 * threads (an authorizer may query a database), about the caller as the stream was opened. Streams
	 * opened together (every client of an instance reconnecting at once after a restart) are asked at moments
	 * of their own, spread over the interval, not all at once; a caller is let read for at most one interval
	 * after the authorizer stopped allowing it. An authorizer that throws leaves the stream open (a database
	 * that does not answer for a while must not end every reader's stream, each of which would come back at
	 * once and be refused its reconnect with an error): the failure is logged, at WARN once an interval
	 * across every stream, and the stream is asked again at its next moment.
	 * <p>
	 * Before it completes, the refused caller {@linkplain #leave leaves} the session's presence, as a
	 * client that closes its view does: its client stops keeping that presence alive once its stream or
	 * subscription ends, and the others would see a reader removed from the session as present for up
	 * to a presence TTL more.
	 */
	Mono<A2Exception> readRevoked(@Nullable Principal caller, String contract, String session, Scheduler scheduler) {
		Duration every = this.reauthorizeEvery;
		if (every.isZero()) {
			return Mono.never();
		}
		A2Access access = A2Access.of(A2Permission.READ, contract, session);
		return Mono.defer(() -> {
			Duration first = Duration.ofNanos(1 + ThreadLocalRandom.current().nextLong(every.toNanos()));
			return Flux.interval(first, every)
				.onBackpressureDrop()
				.concatMap((tick) -> Mono.fromCallable(() -> leftIfRefused(caller, access))
					.subscribeOn(scheduler)
					// the store threads refused the question (their queue full): as an authorizer that failed
					.onErrorResume((ex) -> {
						failed(caller, access, ex);
						return Mono.empty();
					}), 1)
				.next();
		});
	}

	/** The refusal, once the refused caller has left the session's presence, or {@code null} while it may read. */
	private @Nullable A2Exception leftIfRefused(@Nullable Principal caller, A2Access access) {
		A2Exception refusal = reauthorize(caller, access);
		if (refusal != null) {
			leave(caller, access);
		}
		return refusal;
	}

	/**
	 * Removes every field the caller's participant (its name: the participant it writes presence as, and
	 * the only one it may unless {@code a2.web.presence-participant=any}) has in the session, as a client's
	 * goodbye does: a patch of {@code null}s to every subscriber, and tombstones an older write does not
	 * pass. An anonymous caller names no participant, so its presence is left to expire. A failure (the
	 * store unreachable) is logged: the stream ends all the same, and the presence expires after its TTL.
	 */
	private void leave(@Nullable Principal caller, A2Access access) {
		if (caller == null) {
			return;
		}
		String participant = caller.getName();
		try {
			Session session = this.server.session(String.valueOf(access.contract()), String.valueOf(access.session()));
			Map<String, PresenceValue> fields = session.presence().participants().get(participant);
			if (fields == null || fields.isEmpty()) {
				return;
			}
			Map<String, @Nullable Object> gone = new LinkedHashMap<>();
			fields.keySet().forEach((field) -> gone.put(field, null));
			session.presence(PresenceWrite.of(participant, gone));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not remove the presence of '" + participant + "', who may no longer read session '"
					+ access.session() + "' of contract '" + access.contract() + "'; it expires after a2.presence.ttl", ex);
		}
	}

	/** The refusal, or {@code null} while the caller may read (or the authorizer failed to say). */
	private @Nullable A2Exception reauthorize(@Nullable Principal caller, A2Access access) {
		try {
			return this.authorizer.allows(caller, access) ? null : refusal(caller, access);
		}
		catch (RuntimeException ex) {
			failed(caller, access, ex);
			return null;
		}
	}

	/** Logs a re-check that did not answer: at WARN once an interval across every stream, the others at DEBUG. */
	private void failed(@Nullable Principal caller, A2Access access, Throwable ex) {
		String who = (caller != null) ? "'" + caller.getName() + "'" : "an anonymous caller";
		String message = "A2Authorizer failed while asked again whether " + who + " may still read session '"
				+ access.session() + "' of contract '" + access.contract()
				+ "'; the open stream or subscription stays, and is asked again in " + this.reauthorizeEvery;
		long now = System.nanoTime();
		long quiet = this.quietUntil.get();
		if (now - quiet >= 0 && this.quietUntil.compareAndSet(quiet, now + this.reauthorizeEvery.toNanos())) {
			int more = this.unsaid.getAndSet(0);
			logger.warn(message + ((more > 0) ? " (" + more + " more re-checks failed since the last warning, logged at DEBUG)"
					: ""), ex);
		}
		else {
			this.unsaid.incrementAndGet();
			if (logger.isDebugEnabled()) {
				logger.debug(message, ex);
			}
		}
	}

	/** Asks the authorizer, and turns a refusal into the error a caller sees. */
	static void check(A2Authorizer authorizer, @Nullable Principal caller, A2Access access) {
		if (authorizer.allows(caller, access)) {
			return;
		}
		throw refusal(caller, access);
	}

	/** The error a caller the authorizer refused sees. */
	private static A2Exception refusal(@Nullable Principal caller, A2Access access) {
		String permission = access.permission().name().toLowerCase(java.util.Locale.ROOT);
		String where = access.acrossSessions() ? "across sessions"
				: "on session '" + access.session() + "' of contract '" + access.contract() + "'";
		if (caller == null) {
			return new A2Exception(ErrorCode.UNAUTHORIZED, permission + " " + where + " needs an authenticated caller");
		}
		return new A2Exception(ErrorCode.FORBIDDEN, "'" + caller.getName() + "' may not " + permission + " " + where);
	}

}
