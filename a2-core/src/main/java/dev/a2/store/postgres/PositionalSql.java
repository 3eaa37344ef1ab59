package dev.a2.store.postgres;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.PreparedStatementSetter;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
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

	/**
	 * Binds values given in the order of {@code names}, each at every place its name occurs. For a
	 * statement sent for every event: {@link #values} builds a map of the values and looks each up per
	 * call, and Spring's setter wraps and types each one again (together about 5% of the JVM's time per
	 * push, by JFR).
	 */
	Binding binding(String... names) {
		MapSqlParameterSource places = new MapSqlParameterSource();
		for (int i = 0; i < names.length; i++) {
			places.addValue(names[i], i);
		}
		// the statement's parameters in the order of the ?s, each as the place of its name in names;
		// a name the statement has and names has not fails here, once
		Object[] order = NamedParameterUtils.buildValueArray(this.parsed, places, null);
		int[] from = new int[order.length];
		for (int i = 0; i < order.length; i++) {
			from[i] = (Integer) order[i];
		}
		return new Binding(from);
	}

	/** Values in a fixed order of names, bound to a statement's {@code ?}s. */
	static final class Binding {

		private final int[] from;

		private Binding(int[] from) {
			this.from = from;
		}

		/**
		 * Sets the {@code ?}s; a {@link SqlParameterValue} gives its value's type (a null is bound as
		 * that type), any other value is bound as the driver binds its class.
		 */
		PreparedStatementSetter setter(@Nullable Object... values) {
			return (statement) -> set(statement, values);
		}

		private void set(PreparedStatement statement, @Nullable Object[] values) throws SQLException {
			for (int i = 0; i < this.from.length; i++) {
				Object value = values[this.from[i]];
				if (value instanceof SqlParameterValue typed) {
					if (typed.getValue() == null) {
						statement.setNull(i + 1, typed.getSqlType());
					}
					else {
						statement.setObject(i + 1, typed.getValue(), typed.getSqlType());
					}
				}
				else if (value instanceof String text) {
					statement.setString(i + 1, text);
				}
				else if (value == null) {
					statement.setNull(i + 1, Types.NULL);
				}
				else {
					statement.setObject(i + 1, value);
				}
			}
		}

	}

}
