package dev.a2.docs;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.store.postgres.PostgresSessionChanges;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Endpoints;
import dev.a2.web.A2Permission;
import dev.a2.web.A2UnreadBodyFilter;
import dev.a2.web.A2WebExceptionHandler;
import dev.a2.web.A2WebSettings;
import dev.a2.web.LiveConnections;

import org.springframework.context.annotation.Bean;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;

/**
 * The code blocks of docs/web.md, so that they compile: {@link DocumentationSnippetsTests} checks that the
 * page shows each tagged region verbatim.
 */
class WebPageSnippets {

	interface MembershipRepository {

		boolean isMember(String participant, String session);

		boolean isOwner(String participant, String session);

	}

	static A2Endpoints withoutSpringBoot(DataSource dataSource, Contract chat, Consumer shipper,
			GenericApplicationContext context) {
		// tag::without-spring-boot[]
		PostgresSchema.migrate(dataSource);                                   // dev.a2.store.postgres
		PostgresSessionChanges changes = new PostgresSessionChanges(dataSource); // LISTEN/NOTIFY between instances
		A2Server server = A2Server.builder()
			.dataSource(dataSource)
			.sessionChanges(changes)
			.contract(chat)
			.consumer(shipper)
			.build();
		A2Endpoints endpoints = A2Endpoints.builder(server)                   // dev.a2.web
			.authorizer(A2Authorizer.permitAll())                             // required: say who may do what
			.settings(new A2WebSettings("/a2", Duration.ofSeconds(15), 100, List.of("https://*.example.com")))
			.build();

		context.registerBean("a2RouterFunction", RouterFunction.class, endpoints::routerFunction);
		context.registerBean("a2SocketMapping", SimpleUrlHandlerMapping.class, endpoints::socketMapping);
		context.registerBean("a2WebExceptionHandler", A2WebExceptionHandler.class, endpoints::exceptionHandler);
		context.registerBean("a2LiveConnections", LiveConnections.class, endpoints::connections);
		context.registerBean("a2UnreadBodyFilter", A2UnreadBodyFilter.class, endpoints::unreadBodyFilter);
		// end::without-spring-boot[]
		return endpoints;
	}

	// tag::authorizer[]
	@Bean
	A2Authorizer roomMembers(MembershipRepository members) {
		return (caller, permission, contract, session) -> caller != null
				&& permission != A2Permission.OPERATE // the actuator: operators only, see docs/security.md
				&& members.isMember(caller.getName(), session)
				&& (permission != A2Permission.CLEAR || members.isOwner(caller.getName(), session));
	}
	// end::authorizer[]

}
