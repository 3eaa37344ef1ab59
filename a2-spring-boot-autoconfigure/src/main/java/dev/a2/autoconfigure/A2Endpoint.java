package dev.a2.autoconfigure;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
import dev.a2.Lane;
import dev.a2.RedriveAction;
import dev.a2.Session;
import dev.a2.store.DeadLetter;
import dev.a2.store.WorkStore.PendingWork;
import dev.a2.web.A2Access;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Permission;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.util.MimeType;

/**
 * The {@code a2} actuator endpoint: an overview of contracts and consumers with their pending work,
 * lag and dead letters ({@code GET /actuator/a2}), the dead letters themselves
 * ({@code GET /actuator/a2/dead-letters?contract=&session=&consumer=&limit=}), a session's events
 * ({@code GET /actuator/a2/events?contract=&session=&after=&limit=}), the operator's redrive
 * ({@code POST /actuator/a2/redrive}) and, when {@code a2.console.enabled}, the operator console
 * ({@code GET /actuator/a2/console}): a page on these operations, so it is exposed and secured
 * exactly like the endpoint.
 * <p>
 * Every operation but the console's page (which holds no data) asks the {@link A2Authorizer} for
 * {@link A2Permission#OPERATE}: on the session for a session's events, its dead letters and a redrive,
 * {@linkplain A2Access#operations(String) across sessions} for the overview and the dead letters of every
 * session. The caller is the request's principal ({@code null} for Spring Security's anonymous
 * authentication, as on A2's routes); over JMX there is none ({@code null}). A refusal answers 401 to an
 * anonymous caller and 403 to a known one, before anything is looked up.
 */
@Endpoint(id = "a2")
public class A2Endpoint {

	private static final int DEFAULT_LIMIT = 100;

	private static final MimeType JSON = MimeType.valueOf("application/json");

	private static final MimeType HTML = MimeType.valueOf("text/html;charset=UTF-8");

	/** The query parameters each part takes. */
	private static final Map<String, List<String>> PART_PARAMETERS = Map.of("dead-letters",
			List.of("consumer", "contract", "limit", "session"), "events", List.of("after", "contract", "limit", "session"),
			"console", List.of());

	private final A2Server server;

	private final A2Authorizer authorizer;

	private final boolean console;

	/**
	 * @param authorizer who may operate: the one A2's web endpoints ask
	 */
	public A2Endpoint(A2Server server, A2Authorizer authorizer) {
		this(server, authorizer, false);
	}

	/**
	 * @param authorizer who may operate: the one A2's web endpoints ask
	 * @param console whether {@code GET /actuator/a2/console} serves the operator console
	 */
	public A2Endpoint(A2Server server, A2Authorizer authorizer, boolean console) {
		this.server = server;
		this.authorizer = authorizer;
		this.console = console;
	}

	/** Contracts and consumers with their work: an operator's view across sessions. */
	@ReadOperation
	public WebEndpointResponse<Object> overview(@Nullable Principal caller) {
		WebEndpointResponse<Object> refused = refused(caller, A2Access.operations(null));
		if (refused != null) {
			return refused;
		}
		try {
			return json(overview(), 200);
		}
		catch (A2Exception ex) {
			// in A2's error shape, as the parts answer: no exception handler of A2's serves the actuator
			return error(ex);
		}
	}

	private Overview overview() {
		Map<String, PendingWork> pending = new LinkedHashMap<>();
		for (PendingWork work : this.server.pendingWork()) {
			pending.put(work.contract() + "/" + work.consumer(), work);
		}
		Instant now = this.server.clock().instant();
		List<ContractView> contracts = this.server.contracts()
			.stream()
			.map((contract) -> new ContractView(contract.name(), List.copyOf(contract.events().keySet()),
					List.copyOf(contract.reducers().keySet())))
			.toList();
		List<ConsumerView> consumers = new ArrayList<>();
		for (Consumer consumer : this.server.consumers()) {
			PendingWork work = pending.remove(consumer.contract() + "/" + consumer.name());
			Instant oldest = (work != null) ? work.oldestDueAt() : null;
			consumers.add(new ConsumerView(consumer.contract(), consumer.name(), true, laneMode(consumer),
					(consumer.types() != null) ? List.copyOf(consumer.types()) : null, (work != null) ? work.pending() : 0,
					(work != null) ? work.lag() : 0, (work != null) ? work.dead() : 0,
					(oldest != null) ? Duration.between(oldest, now).toMillis() : null));
		}
		// work of consumers this application does not register (removed, renamed, or left to other
		// instances by a2.drain.consumers): its dead letters wait for a redrive all the same
		for (PendingWork work : pending.values()) {
			Instant oldest = work.oldestDueAt();
			consumers.add(new ConsumerView(work.contract(), work.consumer(), false, null, null, work.pending(), work.lag(),
					work.dead(), (oldest != null) ? Duration.between(oldest, now).toMillis() : null));
		}
		return new Overview(contracts, consumers, this.server.drains());
	}

	/**
	 * The endpoint's parts: {@code dead-letters}, {@code events} and {@code console}. The page is HTML,
	 * so every part names its content type, whatever a browser's {@code Accept} prefers.
	 */
	@ReadOperation(produces = { "application/json", "text/html" })
	public WebEndpointResponse<Object> part(@Selector String part, @Nullable String contract, @Nullable String session,
			@Nullable String consumer, @Nullable String after, @Nullable String limit, @Nullable Principal caller) {
		try {
			// the parts share one operation's parameters: each takes only its own ("dead-letters?after=5" was
			// read as if the filter were not there), refused as A2EndpointFields refuses one no part has
			List<String> own = parameters(part);
			if (own != null) {
				Map<String, @Nullable String> given = new LinkedHashMap<>();
				given.put("after", after);
				given.put("consumer", consumer);
				given.put("contract", contract);
				given.put("limit", limit);
				given.put("session", session);
				List<String> stray = given.entrySet().stream()
					.filter((parameter) -> parameter.getValue() != null && !own.contains(parameter.getKey()))
					.map((parameter) -> "'" + parameter.getKey() + "'")
					.toList();
				if (!stray.isEmpty()) {
					return error(400, ErrorCode.INVALID_PAYLOAD.name(), "this read of the a2 endpoint has no parameter "
							+ String.join(", ", stray) + "; its parameters are "
							+ (own.isEmpty() ? "none" : String.join(", ", own)));
				}
			}
			int pageLimit = (limit != null) ? limit(limit) : DEFAULT_LIMIT;
			Long afterNumber = number("after", after);
			return switch (part) {
				case "dead-letters" -> deadLetters(caller, contract, session, consumer, pageLimit);
				case "events" -> events(caller, contract, session, (afterNumber != null) ? afterNumber : 0, pageLimit);
				case "console" -> this.console ? new WebEndpointResponse<>(ConsolePage.html(), 200, HTML)
						: error(404, "NOT_FOUND", "the operator console is off: set a2.console.enabled=true to serve it here");
				default -> throw new InvalidEndpointRequestException("no such part of the a2 endpoint: '" + part + "'",
						"unknown selector");
			};
		}
		catch (A2Exception ex) {
			return error(ex);
		}
	}

	/** The query parameters a part of the endpoint takes, or {@code null} for no such part. */
	static @Nullable List<String> parameters(String part) {
		return PART_PARAMETERS.get(part);
	}

	private WebEndpointResponse<Object> deadLetters(@Nullable Principal caller, @Nullable String contract,
			@Nullable String session, @Nullable String consumer, int limit) {
		A2Access access = (contract != null && session != null) ? A2Access.of(A2Permission.OPERATE, contract, session)
				: A2Access.operations(contract);
		WebEndpointResponse<Object> refused = refused(caller, access);
		if (refused != null) {
			return refused;
		}
		return json(this.server.deadLetters(contract, session, consumer, limit), 200);
	}

	private WebEndpointResponse<Object> events(@Nullable Principal caller, @Nullable String contract,
			@Nullable String session, long after, int limit) {
		if (contract == null || session == null) {
			return error(400, ErrorCode.INVALID_PAYLOAD.name(), "a session's events need contract and session");
		}
		WebEndpointResponse<Object> refused = refused(caller, A2Access.of(A2Permission.OPERATE, contract, session));
		if (refused != null) {
			return refused;
		}
		return json(this.server.session(contract, session).history(after, limit), 200);
	}

	/**
	 * The refusal of what the caller asks, or {@code null} when the authorizer lets it. Spring Security's
	 * anonymous authentication is no caller, as on A2's routes: refused, it is told to log in (401).
	 */
	private @Nullable WebEndpointResponse<Object> refused(@Nullable Principal principal, A2Access access) {
		Principal caller = A2Authorizer.caller(principal);
		if (this.authorizer.allows(caller, access)) {
			return null;
		}
		String where = access.acrossSessions() ? "across sessions"
				: "on session '" + access.session() + "' of contract '" + access.contract() + "'";
		if (caller == null) {
			return error(401, ErrorCode.UNAUTHORIZED.name(), "operate " + where + " needs an authenticated caller");
		}
		return error(403, ErrorCode.FORBIDDEN.name(), "'" + caller.getName() + "' may not operate " + where);
	}

	/**
	 * An operator's decision on a dead letter. Answers 200 {@code {"redriven":true}} when it applied,
	 * 404 when there is no such dead letter (never one, or redriven already: of concurrent redrives of
	 * one unit exactly one applies), 400 for a missing field or an unknown action — errors in A2's
	 * {@code {"error":{"code","message"}}} shape. A body Boot's endpoint machinery cannot read as text
	 * fields never reaches this method: {@code A2EndpointBodyErrors} answers it in the same shape; nor does
	 * one with a field this method does not have, which Boot would drop: {@code A2EndpointFields} refuses it.
	 */
	@WriteOperation
	public WebEndpointResponse<Object> redrive(@Selector String redrive, @Nullable String contract,
			@Nullable String session, @Nullable String consumer, @Nullable String index, @Nullable String action,
			@Nullable Principal caller) {
		if (!redrive.equals("redrive")) {
			throw new InvalidEndpointRequestException("no such operation of the a2 endpoint: '" + redrive + "'", "unknown selector");
		}
		if (contract == null || session == null || consumer == null || index == null || action == null) {
			// named, so that a script's typo ("consumr") shows at once
			List<String> missing = new ArrayList<>();
			String[] names = { "contract", "session", "consumer", "index", "action" };
			String[] values = { contract, session, consumer, index, action };
			for (int i = 0; i < names.length; i++) {
				if (values[i] == null) {
					missing.add(names[i]);
				}
			}
			return error(400, ErrorCode.INVALID_PAYLOAD.name(), "a redrive needs contract, session, consumer, index and action "
					+ "(\"retry\" or \"skip\"); it has no " + String.join(", no ", missing));
		}
		long eventIndex;
		try {
			eventIndex = number("index", index);
		}
		catch (A2Exception ex) {
			return error(ex);
		}
		WebEndpointResponse<Object> refused = refused(caller, A2Access.of(A2Permission.OPERATE, contract, session));
		if (refused != null) {
			return refused;
		}
		RedriveAction chosen;
		switch (action) {
			case "retry" -> chosen = RedriveAction.RETRY;
			case "skip" -> chosen = RedriveAction.SKIP;
			default -> {
				return error(400, ErrorCode.INVALID_PAYLOAD.name(), "action must be \"retry\" or \"skip\", was '" + action + "'");
			}
		}
		try {
			if (this.server.redrive(contract, session, consumer, eventIndex, chosen)) {
				return new WebEndpointResponse<>(new RedriveResult(true), 200);
			}
		}
		catch (A2Exception ex) {
			return error(ex);
		}
		return error(404, "NOT_DEAD_LETTERED", "consumer '" + consumer + "' has no dead letter at event " + eventIndex + " of session '"
				+ session + "' in contract '" + contract + "': it is not dead-lettered, was redriven already, or does not exist");
	}

	/**
	 * A number the caller gave, or {@code null} when it gave none. The endpoint takes numbers as text:
	 * converted by the actuator, one that is not a number (a typo in a script) would be answered in
	 * Boot's error shape, not A2's.
	 */
	private static @Nullable Long number(String name, @Nullable String value) {
		if (value == null) {
			return null;
		}
		try {
			return Long.valueOf(value.trim());
		}
		catch (NumberFormatException ex) {
			// digits too many for a long are a whole number all the same: say what is wrong with it
			String range = value.trim().matches("[+-]?[0-9]+") ? " of at most " + Long.MAX_VALUE : "";
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, name + " must be a whole number" + range + ", was '" + value + "'");
		}
	}

	/**
	 * A page's limit, 1 to {@value Session#MAX_HISTORY_LIMIT}: one out of bounds is refused as on A2's
	 * history route, never served as a page of another size than asked.
	 */
	private static int limit(String value) {
		try {
			long number = Long.parseLong(value.trim());
			if (number >= 1 && number <= Session.MAX_HISTORY_LIMIT) {
				return (int) number;
			}
		}
		catch (NumberFormatException ex) {
			// answered below
		}
		throw new A2Exception(ErrorCode.INVALID_PAYLOAD,
				"limit must be a whole number of 1-" + Session.MAX_HISTORY_LIMIT + ", was '" + value + "'");
	}

	/** An A2 failure (STORE_UNAVAILABLE, UNKNOWN_CONTRACT…) with its §11 status and code. */
	private static WebEndpointResponse<Object> error(A2Exception ex) {
		return error(ex.code().httpStatus(), ex.code().name(), String.valueOf(ex.getMessage()));
	}

	private static WebEndpointResponse<Object> error(int status, String code, String message) {
		return json(errorBody(code, message), status);
	}

	/** A2's error shape, {@code {"error":{"code","message"}}}: every answer of the endpoint's that fails, on every transport. */
	static Map<String, Object> errorBody(String code, String message) {
		return Map.of("error", Map.of("code", code, "message", message));
	}

	private static WebEndpointResponse<Object> json(Object body, int status) {
		return new WebEndpointResponse<>(body, status, JSON);
	}

	private static String laneMode(Consumer consumer) {
		Lane lane = consumer.lane();
		if (lane instanceof Lane.Fixed fixed) {
			return "fixed:" + fixed.name();
		}
		return (lane instanceof Lane.Keyed) ? "keyed" : "independent";
	}

	/** The endpoint's overview. */
	public record Overview(List<ContractView> contracts, List<ConsumerView> consumers, boolean drains) {
	}

	/** A contract: its event types and reducers. */
	public record ContractView(String name, List<String> events, List<String> reducers) {
	}

	/**
	 * A consumer and its work.
	 *
	 * @param registered whether this application registers the consumer; work of one it does not
	 *     (removed, renamed, or run only by other instances) is shown all the same, without its lane
	 *     and types, which only the registration knows
	 * @param lane {@code independent}, {@code keyed} or {@code fixed:<name>}
	 * @param pending units (or cursors) with work to run
	 * @param lag how far behind the log the consumer is: its units not done, or a cursor's distance in
	 *     indexes to the last event of its types; what waits behind a dead letter included
	 * @param oldestPendingAgeMillis how long the oldest pending event has waited, or {@code null}
	 */
	public record ConsumerView(String contract, String name, boolean registered, @Nullable String lane,
			@Nullable List<String> types, long pending, long lag, long deadLetters, @Nullable Long oldestPendingAgeMillis) {
	}

	/** Whether a dead letter was redriven. */
	public record RedriveResult(boolean redriven) {
	}

}
