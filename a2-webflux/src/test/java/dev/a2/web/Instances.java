package dev.a2.web;

import java.util.ArrayList;
import java.util.List;

import dev.a2.test.TestPostgres;
import reactor.blockhound.BlockHound;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Application instances started for a test class: real servers on random ports, all on one
 * database, as several processes of one application would be. BlockHound is installed first, so a
 * blocking call on an event loop fails the test that makes it.
 */
final class Instances implements AutoCloseable {

	private final String schema;

	private final List<ConfigurableApplicationContext> started = new ArrayList<>();

	Instances(String owner) {
		// Netty 4.2's adaptive allocator takes a StampedLock when it grows its magazines: its own
		// bookkeeping, which Netty's BlockHound integration does not list yet
		BlockHound.install((builder) -> builder
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free"));
		this.schema = TestPostgres.newSchema(owner);
	}

	/** The schema the instances share. */
	String schema() {
		return this.schema;
	}

	ConfigurableApplicationContext start(Class<?> application, String... properties) {
		return start(new Class<?>[] { application }, properties);
	}

	ConfigurableApplicationContext start(Class<?>[] sources, String... properties) {
		TestPostgres.Server server = TestPostgres.server();
		List<String> all = new ArrayList<>(List.of("server.port=0", "spring.datasource.url=" + server.jdbcUrl(this.schema),
				"spring.datasource.username=" + server.username(), "spring.datasource.password=" + server.password()));
		all.addAll(List.of(properties));
		ConfigurableApplicationContext context = new SpringApplicationBuilder(sources)
			.properties(all.toArray(String[]::new))
			.run();
		this.started.add(context);
		return context;
	}

	static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	@Override
	public void close() {
		this.started.forEach(ConfigurableApplicationContext::close);
	}

}
