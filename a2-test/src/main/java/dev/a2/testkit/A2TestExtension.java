package dev.a2.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.DrainScheduling;
import dev.a2.store.postgres.PostgresSchema;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The test kit for applications without Spring Boot: an {@link A2Server} of the contracts and
 * consumers {@code setup} registers, on a schema of the test class's own, with a manual drainer and
 * the virtual clock. Register it on a static field; tests take the {@link A2TestKit} as a parameter
 * or from {@link #kit()}. Each test starts with no faults and an empty journal.
 * <pre>{@code
 * @RegisterExtension
 * static final A2TestExtension a2 = new A2TestExtension((server) -> server.contract(chat).consumer(delivery));
 * }</pre>
 */
public final class A2TestExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback,
		AfterAllCallback, ParameterResolver {

	private final Consumer<A2Server.Builder> setup;

	private @Nullable Started started;

	private boolean perClass;

	/** @param setup registers the contracts and consumers (and any other setting) on the server's builder */
	public A2TestExtension(Consumer<A2Server.Builder> setup) {
		this.setup = Objects.requireNonNull(setup, "setup");
	}

	/** The kit of the running test class. */
	public A2TestKit kit() {
		Started current = this.started;
		if (current == null) {
			throw new IllegalStateException("the A2 test kit starts with the test class: register the extension with "
					+ "@RegisterExtension on a static field and use it from a test");
		}
		return current.kit;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.perClass = true;
		start(context);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		start(context).kit.reset();
	}

	@Override
	public void afterEach(ExtensionContext context) {
		Started current = this.started;
		if (current != null) {
			current.kit.releaseStalled();
		}
		if (!this.perClass) {
			stop();
		}
	}

	@Override
	public void afterAll(ExtensionContext context) {
		stop();
	}

	@Override
	public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
		return parameter.getParameter().getType() == A2TestKit.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
		return start(context).kit;
	}

	private synchronized Started start(ExtensionContext context) {
		if (this.started == null) {
			this.started = Started.start(context.getRequiredTestClass().getSimpleName(), this.setup);
		}
		return this.started;
	}

	private synchronized void stop() {
		Started current = this.started;
		this.started = null;
		if (current != null) {
			current.close();
		}
	}

	/** A server on its own schema, and its kit. */
	private record Started(A2TestKit kit, A2Server server, FaultyDataSource dataSource) {

		static Started start(String owner, Consumer<A2Server.Builder> setup) {
			HikariDataSource pool = TestDatabase.newSchemaDataSource(owner, 20);
			PostgresSchema.migrate(pool);
			FaultyDataSource dataSource = new FaultyDataSource(pool);
			VirtualClock clock = new VirtualClock();
			AtomicReference<A2Server> server = new AtomicReference<>();
			A2TestKit kit = new A2TestKit(clock, dataSource, server::get);
			A2Server.Builder builder = A2Server.builder().dataSource(dataSource).stopGrace(Duration.ofSeconds(2));
			setup.accept(builder);
			// after the setup, so that a test cannot leave the real clock or timers in by mistake
			builder.clock(clock).drainScheduling(DrainScheduling.MANUAL).runInterceptor(kit.interceptor());
			server.set(builder.build());
			return new Started(kit, server.get(), dataSource);
		}

		void close() {
			this.kit.releaseStalled();
			try {
				this.server.close();
			}
			finally {
				this.dataSource.close();
			}
		}

	}

}
