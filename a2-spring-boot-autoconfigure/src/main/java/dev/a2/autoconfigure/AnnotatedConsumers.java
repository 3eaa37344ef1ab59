package dev.a2.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.spring.A2Consumer;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds the {@link A2Consumer} methods of the application's beans, by bean type, without creating
 * the beans: a consumer gets its bean when it first runs. A bad definition fails the start-up with
 * one message naming the bean, the method and the fix.
 */
final class AnnotatedConsumers {

	private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
			AnnotatedConsumers.class.getClassLoader());

	private static final SpelExpressionParser SPEL = new SpelExpressionParser();

	private AnnotatedConsumers() {
	}

	static List<Consumer> find(ConfigurableListableBeanFactory beanFactory, Map<String, Contract> contracts,
			JsonMapper jsonMapper) {
		List<Consumer> consumers = new ArrayList<>();
		Map<String, String> declaredBy = new java.util.HashMap<>();
		for (String beanName : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(beanName, false);
			if (type == null) {
				continue;
			}
			Class<?> userType = ClassUtils.getUserClass(type);
			Map<Method, A2Consumer> methods = MethodIntrospector.selectMethods(userType,
					(MethodIntrospector.MetadataLookup<A2Consumer>) (method) -> AnnotatedElementUtils
						.findMergedAnnotation(method, A2Consumer.class));
			methods.forEach((method, annotation) -> {
				String where = describe(beanName, method);
				String earlier = declaredBy.putIfAbsent(annotation.contract() + "/" + annotation.name(), where);
				if (earlier != null) {
					throw new IllegalStateException(where + " and " + earlier + " both declare consumer '" + annotation.name()
							+ "' of contract '" + annotation.contract() + "'; give each a name of its own");
				}
				consumers.add(consumer(beanFactory, beanName, method, annotation, contracts, jsonMapper));
			});
		}
		return consumers;
	}

	private static Consumer consumer(ConfigurableListableBeanFactory beanFactory, String beanName, Method method,
			A2Consumer annotation, Map<String, Contract> contracts, JsonMapper jsonMapper) {
		String where = describe(beanName, method);
		try {
			Contract contract = contracts.get(annotation.contract());
			if (contract == null) {
				throw new IllegalArgumentException("contract '" + annotation.contract()
						+ "' is not a bean; define a Contract bean of that name, or fix the name (known: " + contracts.keySet() + ")");
			}
			Consumer.Builder builder = Consumer.builder(annotation.contract(), annotation.name());
			if (annotation.types().length > 0) {
				builder.types(annotation.types());
			}
			for (String type : annotation.abortOn()) {
				builder.abortOn(type);
			}
			builder.lane(lane(annotation));
			builder.backfill(annotation.backfill());
			Invoker invoker = invoker(method, contract, annotation, jsonMapper);
			ReflectionUtils.makeAccessible(method);
			Consumer consumer = builder.run((context) -> invoker.invoke(beanFactory.getBean(beanName), context));
			consumer.check(contract);
			return consumer;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(where + " is not a valid consumer: " + ex.getMessage(), ex);
		}
	}

	private static String describe(String beanName, Method method) {
		return "@A2Consumer method " + method.getDeclaringClass().getSimpleName() + "." + method.getName() + " of bean '"
				+ beanName + "'";
	}

	private static Lane lane(A2Consumer annotation) {
		if (!annotation.lane().isEmpty() && !annotation.laneKey().isEmpty()) {
			throw new IllegalArgumentException("it sets both lane (a fixed lane) and laneKey (a keyed lane); keep one");
		}
		if (!annotation.lane().isEmpty()) {
			return Lane.fixed(annotation.lane());
		}
		if (!annotation.laneKey().isEmpty()) {
			Expression expression;
			try {
				expression = SPEL.parseExpression(annotation.laneKey());
			}
			catch (RuntimeException ex) {
				throw new IllegalArgumentException("laneKey '" + annotation.laneKey() + "' is not a valid SpEL expression: "
						+ ex.getMessage());
			}
			return Lane.keyed((input) -> {
				SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods().build();
				context.setVariable("session", input.session());
				context.setVariable("id", input.eventId());
				context.setVariable("type", input.type());
				context.setVariable("payload", input.payload());
				Object key = expression.getValue(context);
				return (key != null) ? key.toString() : null;
			});
		}
		return Lane.independent();
	}

	/** Calls the method with the arguments its parameters ask for, and unwraps what it returns. */
	@FunctionalInterface
	interface Invoker {

		@Nullable Object invoke(Object bean, ConsumerContext context) throws Exception;

	}

	private static Invoker invoker(Method method, Contract contract, A2Consumer annotation, JsonMapper jsonMapper) {
		Parameter[] parameters = method.getParameters();
		List<Class<?>> payloadTypes = (annotation.types().length > 0)
				? java.util.Arrays.stream(annotation.types()).<Class<?>>map((type) -> {
					Class<?> payloadType = contract.payloadType(type);
					return (payloadType != null) ? payloadType : Object.class;
				}).toList()
				: List.copyOf(contract.events().values());
		List<java.util.function.Function<ConsumerContext, Object>> arguments = new ArrayList<>();
		for (Parameter parameter : parameters) {
			Class<?> type = parameter.getType();
			if (type == ConsumerContext.class) {
				arguments.add((context) -> context);
			}
			else if (type == Event.class) {
				arguments.add(ConsumerContext::event);
			}
			else if (payloadTypes.stream().allMatch(type::isAssignableFrom)) {
				arguments.add((context) -> {
					Object payload = context.event().payload();
					return type.isInstance(payload) ? payload : jsonMapper.convertValue(payload, type);
				});
			}
			else {
				throw new IllegalArgumentException("parameter '" + parameter.getName() + "' of type " + type.getSimpleName()
						+ " is neither a ConsumerContext, an Event, nor the payload of every type it takes ("
						+ payloadTypes.stream().map(Class::getSimpleName).toList()
						+ "); narrow its types or take a ConsumerContext");
			}
		}
		checkReturnType(method.getReturnType());
		return (bean, context) -> {
			Object[] values = new Object[arguments.size()];
			for (int i = 0; i < values.length; i++) {
				values[i] = arguments.get(i).apply(context);
			}
			try {
				return unwrap(method.invoke(bean, values));
			}
			catch (InvocationTargetException ex) {
				if (ex.getCause() instanceof Exception cause) {
					throw cause;
				}
				throw ex;
			}
		};
	}

	private static void checkReturnType(Class<?> type) {
		boolean fits = type == void.class || type == Void.class || NewEvent.class.isAssignableFrom(type)
				|| Collection.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type)
				|| (REACTOR && org.reactivestreams.Publisher.class.isAssignableFrom(type)) || type == Object.class;
		if (!fits) {
			throw new IllegalArgumentException("it returns " + type.getSimpleName()
					+ "; return void, a NewEvent, a collection of them, a Mono, a Flux or a CompletionStage");
		}
	}

	private static @Nullable Object unwrap(@Nullable Object result) throws Exception {
		if (result instanceof CompletionStage<?> stage) {
			try {
				return stage.toCompletableFuture().join();
			}
			catch (CompletionException ex) {
				if (ex.getCause() instanceof Exception cause) {
					throw cause;
				}
				throw ex;
			}
		}
		if (REACTOR) {
			if (result instanceof reactor.core.publisher.Mono<?> mono) {
				return mono.block();
			}
			if (result instanceof reactor.core.publisher.Flux<?> flux) {
				return flux.collectList().block();
			}
		}
		return result;
	}

}
