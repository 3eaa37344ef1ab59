package dev.a2.chaos;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The processes of a run, all on one database, and the faults done to them: kills of random
 * processes (each started again at once on its port) and restarts of the database.
 */
final class Cluster implements AutoCloseable {

	static final Duration START_TIMEOUT = Duration.ofSeconds(120);

	private final ChaosDatabase database;

	private final List<AppProcess> processes = new ArrayList<>();

	private final AtomicInteger kills = new AtomicInteger();

	private final List<Thread> restarts = new CopyOnWriteArrayList<>();

	private final List<String> failedStarts = new CopyOnWriteArrayList<>();

	Cluster(ChaosDatabase database, int size, Path jar, Path logs) {
		this.database = database;
		for (int slot = 0; slot < size; slot++) {
			this.processes.add(new AppProcess(slot, freePort(), jar, logs));
		}
		// a harness that is itself killed (a CI timeout) must not leave its processes running
		Runtime.getRuntime().addShutdownHook(new Thread(() -> this.processes.forEach(AppProcess::destroy)));
	}

	/** Starts every process; the first alone, so that only one of them migrates a fresh schema. */
	void start() {
		AppProcess first = this.processes.get(0);
		first.start(this.database.jdbcUrl());
		first.awaitReady(START_TIMEOUT);
		this.processes.subList(1, this.processes.size()).forEach((p) -> p.start(this.database.jdbcUrl()));
		this.processes.subList(1, this.processes.size()).forEach((p) -> p.awaitReady(START_TIMEOUT));
	}

	List<AppProcess> processes() {
		return this.processes;
	}

	int kills() {
		return this.kills.get();
	}

	/** A process writers may use now, or null while none is. */
	AppProcess anyReady() {
		List<AppProcess> ready = this.processes.stream().filter(AppProcess::ready).toList();
		return ready.isEmpty() ? null : ready.get(ThreadLocalRandom.current().nextInt(ready.size()));
	}

	/**
	 * SIGKILLs a random process that is up, in whatever it was doing, and starts a new JVM in its
	 * place in the background (the next fault need not wait for it). One process is always left up,
	 * so that the load goes on through every fault: it waits for a second one to be up first.
	 */
	AppProcess killOne() {
		ChaosIntegrationTests.awaitUntil(START_TIMEOUT,
				() -> this.processes.stream().filter(AppProcess::ready).count() >= Math.min(2, this.processes.size()));
		List<AppProcess> up = this.processes.stream().filter(AppProcess::ready).toList();
		AppProcess victim = up.get(ThreadLocalRandom.current().nextInt(up.size()));
		victim.kill();
		this.kills.incrementAndGet();
		Thread restart = new Thread(() -> {
			victim.start(this.database.jdbcUrl());
			try {
				victim.awaitReady(START_TIMEOUT);
			}
			catch (IllegalStateException ex) {
				this.failedStarts.add(ex.getMessage());
			}
		}, "restart-" + victim.slot());
		this.restarts.add(restart);
		restart.start();
		return victim;
	}

	/** Waits for every restart begun by a kill: a database restart or the verdict comes after them. */
	void awaitRestarts() {
		for (Thread restart : this.restarts) {
			try {
				restart.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/** Processes that did not come back after a kill (with where to read why). */
	List<String> failedStarts() {
		return this.failedStarts;
	}

	/**
	 * Crashes the database (or stops it, with {@code crash} false), under load, and starts it again
	 * on the same data after {@code down}. The processes stay up: their pools and listening
	 * connections must come back by themselves.
	 */
	void restartDatabase(boolean crash, Duration down, Runnable stopped) {
		// a process starting meanwhile would find no database and exit: restarts finish first
		awaitRestarts();
		if (crash) {
			this.database.crash();
		}
		else {
			this.database.stop();
		}
		stopped.run();
		AppProcess.pause(down);
		this.database.startAgain();
	}

	/** Processes that died without being killed: a run with any of these failed. */
	List<AppProcess> crashed() {
		return this.processes.stream().filter((p) -> !p.alive()).toList();
	}

	@Override
	public void close() {
		this.processes.forEach(AppProcess::stop);
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
