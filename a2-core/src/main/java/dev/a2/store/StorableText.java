package dev.a2.store;

/**
 * What PostgreSQL text and {@code jsonb} cannot hold, found before it reaches the database: the NUL
 * character (refused by both) and unpaired UTF-16 surrogates (which the driver would store as
 * {@code ?}, changing the value without a word).
 */
public final class StorableText {

	private StorableText() {
	}

	/** Whether a plain string can be stored as it is. */
	public static boolean isStorable(String text) {
		return firstUnstorable(text, 0) < 0;
	}

	/**
	 * {@code text} with each char that cannot be stored replaced by U+FFFD, as a decoder shows a byte
	 * it cannot read: for text A2 did not write and must not refuse, such as a model's.
	 */
	public static String replacingUnstorable(String text) {
		int at = firstUnstorable(text, 0);
		if (at < 0) {
			return text;
		}
		StringBuilder storable = new StringBuilder(text.length()).append(text, 0, at);
		while (at >= 0) {
			int next = firstUnstorable(text, at + 1);
			storable.append('\uFFFD').append(text, at + 1, (next < 0) ? text.length() : next);
			at = next;
		}
		return storable.toString();
	}

	/** Where from {@code from} on the first char is that cannot be stored, or -1. */
	private static int firstUnstorable(String text, int from) {
		for (int i = from; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == 0) {
				return i;
			}
			if (Character.isHighSurrogate(c)) {
				if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
					return i;
				}
				i++;
			}
			else if (Character.isLowSurrogate(c)) {
				return i;
			}
		}
		return -1;
	}

	/** Whether JSON text can be stored as {@code jsonb}: as {@link #isStorable}, and no {@code \u0000} escape. */
	public static boolean isStorableJson(String json) {
		if (!isStorable(json)) {
			return false;
		}
		for (int i = json.indexOf('\\'); i >= 0 && i + 1 < json.length(); i = json.indexOf('\\', i + 2)) {
			if (json.charAt(i + 1) == 'u' && json.startsWith("0000", i + 2)) {
				return false;
			}
		}
		return true;
	}

	/** Why a value was refused, for an {@code INVALID_PAYLOAD} message. */
	public static String refusal(String where) {
		return where + " holds a NUL character or an unpaired UTF-16 surrogate, which cannot be stored";
	}

}
