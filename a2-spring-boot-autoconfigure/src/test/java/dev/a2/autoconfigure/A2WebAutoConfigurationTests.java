package dev.a2.autoconfigure;

import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.Contract;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Permission;
import dev.a2.web.A2Routes;
import dev.a2.web.A2Servlet;
import dev.a2.web.A2SocketHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/** When the endpoints are served, and how each of their beans backs off to the application's. */
class A2WebAutoConfigurationTests {

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("webautoconfig", 4);

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class,
				A2WebAutoConfiguration.class,
				JacksonAutoConfiguration.class))
		.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
		.withUserConfiguration(ChatContract.class);

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	void aReactiveApplicationWithContractsGetsTheRoutesAndTheSocket() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(A2Routes.class).hasSingleBean(A2SocketHandler.class).hasBean("a2RouterFunction")
				.hasBean("a2SocketMapping");
			// without Spring Security, everyone may: said once at start-up
			assertThat(context.getBean(A2Authorizer.class).allows(null, A2Permission.CLEAR, "chat", "s")).isTrue();
		});
	}

	@Test
	void theApplicationsAuthorizerAndRouterFunctionWin() {
		this.runner.withUserConfiguration(OwnBeans.class).run((context) -> {
			assertThat(context.getBean(A2Authorizer.class)).isSameAs(context.getBean(OwnBeans.class).authorizer);
			assertThat(context.getBean("a2RouterFunction")).isSameAs(context.getBean(OwnBeans.class).routes);
		});
	}

	@Test
	void theEndpointsCanBeSwitchedOff() {
		this.runner.withPropertyValues("a2.web.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(A2Routes.class).doesNotHaveBean(A2SocketHandler.class));
	}

	/** Such an origin was taken, and then refused its pages' sockets with 403 as if it were not named. */
	@Test
	void anAllowedOriginNoPageCanHaveFailsTheStartUpNamingTheProperty() {
		for (String origin : List.of("example.com", "https://example.com/app", "https://*.example.com:[8080")) {
			this.runner.withPropertyValues("a2.web.allowed-origins=https://ok.example.com," + origin)
				.run((context) -> assertThat(context).hasFailed()
					.getFailure()
					.rootCause()
					.isInstanceOf(A2PropertiesException.class)
					.hasMessageStartingWith("a2.web.allowed-origins: allowed origin '" + origin + "' matches no page")
					.hasMessageContaining("scheme://host[:port]"));
		}
		// a port list in a comma-separated value is split at its commas
		this.runner.withPropertyValues("a2.web.allowed-origins=https://*.example.com,http://localhost:[8080,8081]")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageStartingWith("a2.web.allowed-origins: allowed origin 'http://localhost:[8080' matches no page")
				.hasMessageEndingWith("name that origin alone, as a2.web.allowed-origins[0]=http://localhost:[8080,8081])"));
		this.runner.withPropertyValues("a2.web.allowed-origins[0]=https://*.example.com",
				"a2.web.allowed-origins[1]=http://localhost:[8080,8081]", "a2.web.allowed-origins[2]=http://[::1]:8080/",
				"a2.web.allowed-origins[3]=*")
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(A2Routes.class)
				.isNotNull());
	}

	@Test
	void aServletApplicationGetsNoWebFluxEndpoints() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class,
					A2WebAutoConfiguration.class))
			.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
			.withUserConfiguration(ChatContract.class)
			.run((context) -> assertThat(context).doesNotHaveBean(A2Routes.class));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aServletApplicationServesTheEndpointsAsAServletAtTheBasePath(CapturedOutput output) {
		servletRunner().withPropertyValues("a2.web.base-path=/api/a2/").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(A2Routes.class).hasBean("a2RouterFunction");
			ServletRegistrationBean<?> servlet = context.getBean("a2Servlet", ServletRegistrationBean.class);
			assertThat(servlet.getServlet()).isInstanceOf(A2Servlet.class);
			assertThat(servlet.getUrlMappings()).containsExactly("/api/a2/*");
			assertThat(servlet.isAsyncSupported()).isTrue();
			assertThat(servlet.isEnabled()).isTrue();
			context.getBean(A2Authorizer.class);   // as the routes ask it
			assertThat(output).doesNotContain("are not served")
				.contains("A2's endpoints under /api/a2/ and its actuator endpoint are open");
		});
	}

	@Test
	void aServletApplicationThatTurnedTheEndpointsOffGetsNoServlet() {
		servletRunner().withPropertyValues("a2.web.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("a2Servlet").doesNotHaveBean(A2Routes.class));
	}

	/** At the root, the servlet would take every request of the application from Spring MVC. */
	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aServletApplicationMountsNothingAtTheRoot(CapturedOutput output) {
		servletRunner().withPropertyValues("a2.web.base-path=/").run((context) -> {
			assertThat(context.getBean("a2Servlet", ServletRegistrationBean.class).isEnabled()).isFalse();
			assertThat(output).contains("A2's endpoints are not served").contains("a2.web.base-path");
		});
	}

	private WebApplicationContextRunner servletRunner() {
		return new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, A2AuthorizationAutoConfiguration.class,
					A2WebAutoConfiguration.class))
			.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
			.withUserConfiguration(ChatContract.class);
	}

	@Configuration(proxyBeanMethods = false)
	static class ChatContract {

		@Bean
		Contract chat() {
			return Contract.builder("chat").event("said", String.class).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnBeans {

		final A2Authorizer authorizer = (caller, permission, contract, session) -> caller != null;

		final RouterFunction<ServerResponse> routes = RouterFunctions.route().GET("/mine", (request) -> ServerResponse.ok().build())
			.build();

		@Bean
		A2Authorizer myAuthorizer() {
			return this.authorizer;
		}

		@Bean
		RouterFunction<ServerResponse> a2RouterFunction() {
			return this.routes;
		}

	}

}
