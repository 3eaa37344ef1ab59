package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
import dev.a2.Lane;
import dev.a2.RedriveAction;
import dev.a2.store.DeadLetter;
import dev.a2.store.WorkStore.PendingWork;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code a2} actuator endpoint: an overview of contracts and consumers with their pending work
 * and dead letters ({@code GET /actuator/a2}), the dead letters themselves
 * ({@code GET /actuator/a2/dead-letters?contract=&session=&consumer=&limit=}), and the operator's
 * redrive ({@code POST /actuator/a2/redrive}).
 */
@Endpoint(id = "a2")
public class A2Endpoint {

	private static final int DEFAULT_LIMIT = 100;

	private final A2Server server;

	public A2Endpoint(A2Server server) {
		this.server = server;
	}

	@ReadOperation
	public Overview overview() {
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
		List<ConsumerView> consumers = this.server.consumers().stream().map((consumer) -> {
			PendingWork work = pending.get(consumer.contract() + "/" + consumer.name());
			Instant oldest = (work != null) ? work.oldestDueAt() : null;
			return new ConsumerView(consumer.contract(), consumer.name(), laneMode(consumer),
					(consumer.types() != null) ? List.copyOf(consumer.types()) : null, (work != null) ? work.pending() : 0,
					(work != null) ? work.dead() : 0,
					(oldest != null) ? Duration.between(oldest, now).toMillis() : null);
		}).toList();
		return new Overview(contracts, consumers, this.server.drains());
	}

	@ReadOperation
	public List<DeadLetter> deadLetters(@Selector String deadLetters, @Nullable String contract, @Nullable String session,
			@Nullable String consumer, @Nullable Integer limit) {
		if (!deadLetters.equals("dead-letters")) {
			throw new InvalidEndpointRequestException("no such part of the a2 endpoint: '" + deadLetters + "'", "unknown selector");
		}
		return this.server.deadLetters(contract, session, consumer, (limit != null) ? Math.min(limit, 1000) : DEFAULT_LIMIT);
	}

	/**
	 * An operator's decision on a dead letter. Answers 200 {@code {"redriven":true}} when it applied,
	 * 404 when there is no such dead letter (never one, or redriven already: of concurrent redrives of
	 * one unit exactly one applies), 400 for a missing field or an unknown action — errors in A2's
	 * {@code {"error":{"code","message"}}} shape.
	 */
	@WriteOperation
	public WebEndpointResponse<Object> redrive(@Selector String redrive, @Nullable String contract,
			@Nullable String session, @Nullable String consumer, @Nullable Long index, @Nullable String action) {
		if (!redrive.equals("redrive")) {
			throw new InvalidEndpointRequestException("no such operation of the a2 endpoint: '" + redrive + "'", "unknown selector");
		}
		if (contract == null || session == null || consumer == null || index == null || action == null) {
			return error(400, ErrorCode.INVALID_PAYLOAD.name(),
					"a redrive needs contract, session, consumer, index and action (\"retry\" or \"skip\")");
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
			if (this.server.redrive(contract, session, consumer, index, chosen)) {
				return new WebEndpointResponse<>(new RedriveResult(true), 200);
			}
		}
		catch (A2Exception ex) {
			return error(ex.code().httpStatus(), ex.code().name(), String.valueOf(ex.getMessage()));
		}
		return error(404, "NOT_DEAD_LETTERED", "consumer '" + consumer + "' has no dead letter at event " + index + " of session '"
				+ session + "' in contract '" + contract + "': it is not dead-lettered, was redriven already, or does not exist");
	}

	private static WebEndpointResponse<Object> error(int status, String code, String message) {
		return new WebEndpointResponse<>(Map.of("error", Map.of("code", code, "message", message)), status);
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
	 * @param lane {@code independent}, {@code keyed} or {@code fixed:<name>}
	 * @param oldestPendingAgeMillis how long the oldest pending event has waited, or {@code null}
	 */
	public record ConsumerView(String contract, String name, String lane, @Nullable List<String> types, long pending,
			long deadLetters, @Nullable Long oldestPendingAgeMillis) {
	}

	/** Whether a dead letter was redriven. */
	public record RedriveResult(boolean redriven) {
	}

}
