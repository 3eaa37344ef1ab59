package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.a2.A2Server;
import dev.a2.Consumer;
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

	@WriteOperation
	public RedriveResult redrive(@Selector String redrive, String contract, String session, String consumer, long index,
			String action) {
		if (!redrive.equals("redrive")) {
			throw new InvalidEndpointRequestException("no such operation of the a2 endpoint: '" + redrive + "'", "unknown selector");
		}
		RedriveAction chosen = switch (action) {
			case "retry" -> RedriveAction.RETRY;
			case "skip" -> RedriveAction.SKIP;
			default -> throw new InvalidEndpointRequestException("action must be 'retry' or 'skip', was '" + action + "'",
					"bad action");
		};
		return new RedriveResult(this.server.redrive(contract, session, consumer, index, chosen));
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
