package dev.a2.autoconfigure;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import dev.a2.ErrorCode;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameter;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.util.MimeType;

/**
 * A field a write operation of the {@code a2} actuator endpoint does not have ({@code "dryRun":true}, a
 * misspelt {@code "acton"}) answers 400 {@code INVALID_PAYLOAD} naming it and the fields there are, and
 * the operation does not run. Boot hands an operation only the fields it declares and drops the others,
 * so a redrive sent with a field its sender meant to matter was applied as if the field were not there
 * (§11: bad input gets a clear error and changes nothing). The fields are the body's and the query's
 * alike, as Boot merges them; the selector ({@code redrive}) and what Boot resolves itself (the caller)
 * are no fields. A read's query parameters likewise: {@code dead-letters?sesion=…} listed every session's
 * dead letters, as if no session were asked for.
 */
final class A2EndpointFields implements OperationInvokerAdvisor {

	private static final EndpointId A2 = EndpointId.of("a2");

	private static final MimeType JSON = MimeType.valueOf("application/json");

	@Override
	public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
			OperationInvoker invoker) {
		if (!A2.equals(endpointId) || (operationType != OperationType.WRITE && operationType != OperationType.READ)) {
			return invoker;
		}
		boolean write = operationType == OperationType.WRITE;
		List<OperationParameter> declared = parameters.stream().toList();
		return (context) -> {
			List<String> unknown = context.getArguments()
				.keySet()
				.stream()
				.filter((name) -> declared.stream().noneMatch((parameter) -> parameter.getName().equals(name)
						&& !context.canResolve(parameter.getType())))
				.sorted()
				.toList();
			if (unknown.isEmpty()) {
				return invoker.invoke(context);
			}
			String named = unknown.stream().map((name) -> "'" + name + "'").collect(Collectors.joining(", "));
			Set<String> fields = fields(declared, context);
			String message = write
					? "a redrive has no field " + named + "; its fields are " + String.join(", ", fields) + ". Nothing was redriven"
					: "this read of the a2 endpoint has no parameter " + named + "; its parameters are "
							+ (fields.isEmpty() ? "none" : String.join(", ", fields));
			return new WebEndpointResponse<>(A2Endpoint.errorBody(ErrorCode.INVALID_PAYLOAD.name(), message), 400, JSON);
		};
	}

	/**
	 * The fields a caller gives: the operation's parameters but its selector and what Boot resolves itself;
	 * of a part of the endpoint, the part's own.
	 */
	private static Set<String> fields(List<OperationParameter> declared, InvocationContext context) {
		Set<String> fields = new TreeSet<>();
		for (OperationParameter parameter : declared) {
			if (parameter.getAnnotation(Selector.class) == null && !context.canResolve(parameter.getType())) {
				fields.add(parameter.getName());
			}
		}
		Object part = context.getArguments().get("part");
		List<String> own = (part instanceof String name) ? A2Endpoint.parameters(name) : null;
		if (own != null) {
			fields.retainAll(own);
		}
		return fields;
	}

}
