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
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == 0) {
				return false;
			}
			if (Character.isHighSurrogate(c)) {
				if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
					return false;
				}
				i++;
			}
			else if (Character.isLowSurrogate(c)) {
				return false;
			}
		}
		return true;
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
