package dev.a2.store.postgres;

import org.springframework.jdbc.core.namedparam.NamedParameterUtils;
import org.springframework.jdbc.core.namedparam.ParsedSql;
import org.springframework.jdbc.core.namedparam.SqlParameterSource;

/**
 * A statement with named parameters, turned into its {@code ?} form once. The append runs for every
 * event: through {@code JdbcClient} each call built its 1.5 kB text again, and the driver hashed the
 * new string to find its prepared statement (about a tenth of the JVM's time per append, by JFR).
 * Parameters that are arrays are bound as one value each, so the text never depends on the values.
 */
final class PositionalSql {

	private final ParsedSql parsed;

	private final String sql;

	private PositionalSql(String named) {
		this.parsed = NamedParameterUtils.parseSqlStatement(named);
		this.sql = NamedParameterUtils.substituteNamedParameters(this.parsed, null);
	}

	static PositionalSql of(String named) {
		return new PositionalSql(named);
	}

	/** The text, with a {@code ?} for each occurrence of a named parameter. */
	String sql() {
		return this.sql;
	}

	/** The values in the order of the {@code ?}s, typed where the source gave a type. */
	Object[] values(SqlParameterSource parameters) {
		return NamedParameterUtils.buildValueArray(this.parsed, parameters, null);
	}

}
