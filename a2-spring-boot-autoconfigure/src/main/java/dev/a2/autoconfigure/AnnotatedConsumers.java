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
import java.util.function.BiPredicate;

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
			BiPredicate<Event, Event> abortWhen = abortWhen(annotation);
			for (String type : annotation.abortOn()) {
				builder.abortOn(type, abortWhen);
			}
			builder.lane(lane(annotation));
			builder.backfill(annotation.backfill());
			ReflectionUtils.makeAccessible(method);
			Consumer consumer;
			if (method.getParameterCount() == 1 && method.getParameterTypes()[0] == List.class) {
				// a projection that takes a claim's events at once
				java.util.function.Function<ConsumerContext, Object> element = batchElement(method, contract, annotation, jsonMapper);
				checkReturnType(method.getReturnType());
				consumer = builder.runBatch((batch) -> call(method, beanFactory.getBean(beanName),
						new Object[] { batch.stream().map(element).toList() }));
			}
			else {
				Invoker invoker = invoker(method, contract, annotation, jsonMapper);
				consumer = builder.run((context) -> invoker.invoke(beanFactory.getBean(beanName), context));
			}
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

	private static BiPredicate<Event, Event> abortWhen(A2Consumer annotation) {
		if (annotation.abortWhen().isEmpty()) {
			return (trigger, arrived) -> true;
		}
		if (annotation.abortOn().length == 0) {
			throw new IllegalArgumentException("it sets abortWhen without abortOn; name the event types that abort in abortOn");
		}
		Expression expression;
		try {
			expression = SPEL.parseExpression(annotation.abortWhen());
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("abortWhen '" + annotation.abortWhen() + "' is not a valid SpEL expression: "
					+ ex.getMessage());
		}
		return (trigger, arrived) -> {
			SimpleEvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods().build();
			context.setVariable("trigger", trigger);
			context.setVariable("event", arrived);
			return Boolean.TRUE.equals(expression.getValue(context, Boolean.class));
		};
	}

	/** Calls the method with the arguments its parameters ask for, and unwraps what it returns. */
	@FunctionalInterface
	interface Invoker {

		@Nullable Object invoke(Object bean, ConsumerContext context) throws Exception;

	}

	private static Invoker invoker(Method method, Contract contract, A2Consumer annotation, JsonMapper jsonMapper) {
		Parameter[] parameters = method.getParameters();
		List<Class<?>> payloadTypes = payloadTypes(contract, annotation);
		List<java.util.function.Function<ConsumerContext, Object>> arguments = new ArrayList<>();
		for (Parameter parameter : parameters) {
			arguments.add(argument(parameter.getName(), parameter.getType(), payloadTypes, jsonMapper));
		}
		checkReturnType(method.getReturnType());
		return (bean, context) -> {
			Object[] values = new Object[arguments.size()];
			for (int i = 0; i < values.length; i++) {
				values[i] = arguments.get(i).apply(context);
			}
			return call(method, bean, values);
		};
	}

	/** What one element of a batch method's {@code List<…>} parameter is made of. */
	private static java.util.function.Function<ConsumerContext, Object> batchElement(Method method, Contract contract,
			A2Consumer annotation, JsonMapper jsonMapper) {
		if (annotation.lane().isEmpty()) {
			throw new IllegalArgumentException("it takes a List, a batch of a cursor's events, so it needs a fixed lane: lane = \"…\"");
		}
		java.lang.reflect.Type generic = method.getGenericParameterTypes()[0];
		if (!(generic instanceof java.lang.reflect.ParameterizedType list)
				|| !(list.getActualTypeArguments()[0] instanceof Class<?> element)) {
			throw new IllegalArgumentException("its List parameter must name its elements: List<ConsumerContext>, List<Event> or "
					+ "a list of the payload type");
		}
		return argument(method.getParameters()[0].getName() + "[i]", element, payloadTypes(contract, annotation), jsonMapper);
	}

	private static List<Class<?>> payloadTypes(Contract contract, A2Consumer annotation) {
		return (annotation.types().length > 0)
				? java.util.Arrays.stream(annotation.types()).<Class<?>>map((type) -> {
					Class<?> payloadType = contract.payloadType(type);
					return (payloadType != null) ? payloadType : Object.class;
				}).toList()
				: List.copyOf(contract.events().values());
	}

	/** How a parameter of this type is given from a run's context. */
	private static java.util.function.Function<ConsumerContext, Object> argument(String name, Class<?> type,
			List<Class<?>> payloadTypes, JsonMapper jsonMapper) {
		if (type == ConsumerContext.class) {
			return (context) -> context;
		}
		if (type == Event.class) {
			return ConsumerContext::event;
		}
		if (payloadTypes.stream().allMatch(type::isAssignableFrom)) {
			return (context) -> {
				Object payload = context.event().payload();
				return type.isInstance(payload) ? payload : jsonMapper.convertValue(payload, type);
			};
		}
		throw new IllegalArgumentException("parameter '" + name + "' of type " + type.getSimpleName()
				+ " is neither a ConsumerContext, an Event, nor the payload of every type it takes ("
				+ payloadTypes.stream().map(Class::getSimpleName).toList() + "); narrow its types or take a ConsumerContext");
	}

	private static @Nullable Object call(Method method, Object bean, Object[] values) throws Exception {
		try {
			return unwrap(method.invoke(bean, values));
		}
		catch (InvocationTargetException ex) {
			if (ex.getCause() instanceof Exception cause) {
				throw cause;
			}
			// an Error too is the method's failure: its dead letter must say what it threw, not "InvocationTargetException: null"
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
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
				if (ex.getCause() instanceof Error error) {
					throw error;
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
