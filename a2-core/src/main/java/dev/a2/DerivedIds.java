package dev.a2;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The ids A2 derives for what consumer runs write, so that a re-run writes the same ids and the
 * store's per-session unique index turns the repeat into a no-op (exactly-once effects over
 * at-least-once runs).
 * <p>
 * Each id is a name-based UUID version 5 (SHA-1) in one of A2's namespaces. The name is the parts
 * of the derivation, each written as its length, a colon and its text, so that no two different
 * lists of parts share a name. A consumer name of {@code null} leaves the consumer out: A2's own
 * {@code a2.} consumers derive ids from the event alone.
 */
public final class DerivedIds {

	static final UUID APPEND_NAMESPACE = UUID.fromString("29cfc476-5ca6-4747-9cfb-d610213780ad");

	static final UUID RETURN_NAMESPACE = UUID.fromString("efdf4d7e-89d7-46ce-9750-3ba5d74c09fe");

	static final UUID SCHEDULE_NAMESPACE = UUID.fromString("24cad70f-0982-4669-ae2f-121ed0bcb471");

	static final UUID SCHEDULE_CLEAR_NAMESPACE = UUID.fromString("9e107269-9955-464e-bc5a-584921cfa31f");

	static final UUID SCHEDULED_EVENT_NAMESPACE = UUID.fromString("8885182a-c486-41ae-8216-18ce72c9d178");

	static final UUID EFFECT_NAMESPACE = UUID.fromString("1c55dbb5-81bd-462e-9871-305c3a49a96b");

	private static final Pattern UUID_V5 = Pattern
		.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-5[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}");

	private DerivedIds() {
	}

	/** Whether an id has the shape A2 keeps for derived ids; clients may not push such ids. */
	public static boolean isDerivedShape(String id) {
		return id.length() == 36 && UUID_V5.matcher(id).matches();
	}

	/** The id of the {@code ordinal}th event of a run's {@code session.append(name, …)}. */
	public static String appendedEvent(String triggerEventId, String name, int ordinal, @Nullable String consumer) {
		if (name.isEmpty()) {
			throw new IllegalArgumentException("an append name must not be empty");
		}
		return derive(APPEND_NAMESPACE, triggerEventId, name, Integer.toString(ordinal), consumer);
	}

	/** The id of the {@code ordinal}th event a run returned. */
	public static String returnedEvent(String triggerEventId, int ordinal, @Nullable String consumer) {
		return derive(RETURN_NAMESPACE, triggerEventId, Integer.toString(ordinal), consumer);
	}

	/** The id of a scheduled append; a clear of the session ({@code clearIndex}) makes a new one. */
	public static String schedule(String contract, String session, String triggerEventId, String name, int clearIndex,
			@Nullable String consumer) {
		return derive(SCHEDULE_NAMESPACE, contract, session, triggerEventId, name, Integer.toString(clearIndex),
				consumer);
	}

	/** The id of a scheduled clear. */
	public static String scheduleClear(String contract, String session, String triggerEventId, String name,
			int clearIndex, @Nullable Long ifLastIndex, @Nullable String consumer) {
		return derive(SCHEDULE_CLEAR_NAMESPACE, contract, session, triggerEventId, name, Integer.toString(clearIndex),
				(ifLastIndex != null) ? ifLastIndex.toString() : "-", consumer);
	}

	/**
	 * The key of an effect outside A2 that a consumer's run of a trigger has (see
	 * {@link ConsumerContext#effectKey}). Unlike the ids of the events a run writes, which are unique
	 * within their session only, it names the contract and the session.
	 */
	public static String effect(String contract, String session, String triggerEventId, String consumer, String effect) {
		if (effect.isEmpty()) {
			throw new IllegalArgumentException("an effect name must not be empty");
		}
		return derive(EFFECT_NAMESPACE, contract, session, triggerEventId, consumer, effect);
	}

	/** The id of the {@code ordinal}th event a scheduled task appends. */
	public static String scheduledEvent(String scheduleId, int ordinal) {
		return derive(SCHEDULED_EVENT_NAMESPACE, scheduleId, Integer.toString(ordinal));
	}

	private static String derive(UUID namespace, @Nullable String... parts) {
		StringBuilder name = new StringBuilder();
		for (String part : parts) {
			if (part != null) {
				name.append(part.length()).append(':').append(part);
			}
		}
		return uuidV5(namespace, name.toString()).toString();
	}

	static UUID uuidV5(UUID namespace, String name) {
		MessageDigest sha1;
		try {
			sha1 = MessageDigest.getInstance("SHA-1");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("the JVM has no SHA-1", ex);
		}
		sha1.update(toBytes(namespace.getMostSignificantBits()));
		sha1.update(toBytes(namespace.getLeastSignificantBits()));
		byte[] hash = sha1.digest(name.getBytes(StandardCharsets.UTF_8));
		hash[6] = (byte) ((hash[6] & 0x0f) | 0x50);
		hash[8] = (byte) ((hash[8] & 0x3f) | 0x80);
		return new UUID(toLong(hash, 0), toLong(hash, 8));
	}

	private static byte[] toBytes(long value) {
		byte[] bytes = new byte[8];
		for (int i = 7; i >= 0; i--) {
			bytes[i] = (byte) value;
			value >>>= 8;
		}
		return bytes;
	}

	private static long toLong(byte[] bytes, int offset) {
		long value = 0;
		for (int i = offset; i < offset + 8; i++) {
			value = (value << 8) | (bytes[i] & 0xff);
		}
		return value;
	}

}
