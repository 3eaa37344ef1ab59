package dev.a2.web;

import java.security.Principal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.PresenceWrite;
import dev.a2.wire.Wire;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Reads a presence write, {@code {"participant"?, "values":{field: value|null}, "at"?}}: the
 * participant defaults to the caller's name, {@code at} is an ISO-8601 instant or epoch milliseconds.
 */
final class PresenceWrites {

	private PresenceWrites() {
	}

	/** The members of a write. */
	static final Set<String> MEMBERS = Set.of("participant", "values", "at");

	/** The write, or {@code null} when {@code node} is absent. */
	static @Nullable PresenceWrite read(@Nullable JsonNode node, @Nullable Principal caller, String where) {
		return read(node, caller, where, "the body", MEMBERS);
	}

	/**
	 * The write, or {@code null} when {@code node} is absent.
	 * @param what what the node is called in an error when {@code where} is empty
	 * @param members the members it may have: those of a write, and a frame's own
	 */
	static @Nullable PresenceWrite read(@Nullable JsonNode node, @Nullable Principal caller, String where, String what,
			Set<String> members) {
		if (node == null || node.isNull()) {
			return null;
		}
		if (!node.isObject()) {
			throw invalid(where.isEmpty() ? "a presence write must be an object" : where.substring(0, where.length() - 1)
					+ " must be an object {\"participant\"?,\"values\",\"at\"?}");
		}
		Wire.onlyMembers(node, where.isEmpty() ? what : where.substring(0, where.length() - 1), members);
		JsonNode participantNode = node.get("participant");
		String participant;
		if (participantNode == null || participantNode.isNull()) {
			if (caller == null) {
				throw invalid(where + "participant is required when the caller is anonymous");
			}
			participant = caller.getName();
		}
		else if (!participantNode.isString()) {
			throw invalid(where + "participant must be a string");
		}
		else {
			participant = participantNode.asString();
		}
		JsonNode values = node.get("values");
		if (values == null || !values.isObject()) {
			throw invalid(where + "values must be an object of field: value (or null to remove it)");
		}
		Map<String, @Nullable Object> read = new LinkedHashMap<>();
		for (Map.Entry<String, JsonNode> field : values.properties()) {
			read.put(field.getKey(), field.getValue().isNull() ? null : field.getValue());
		}
		return new PresenceWrite(participant, read, at(node.get("at"), where));
	}

	private static @Nullable Instant at(@Nullable JsonNode at, String where) {
		if (at == null || at.isNull()) {
			return null;
		}
		if (at.isIntegralNumber() && at.canConvertToLong()) {
			return Instant.ofEpochMilli(at.asLong());
		}
		if (at.isString()) {
			try {
				return Instant.parse(at.asString());
			}
			catch (DateTimeParseException ex) {
				// answered below
			}
		}
		throw invalid(where + "at must be an ISO-8601 instant (2026-01-31T12:00:00Z) or epoch milliseconds");
	}

	private static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

}
