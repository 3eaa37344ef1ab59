package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;

import org.springframework.jdbc.core.support.AbstractSqlTypeValue;

/**
 * A Java array bound as a PostgreSQL array parameter, so a whole batch travels in one statement
 * whose text never changes (one prepared statement for every batch size).
 */
final class SqlArrays {

	private SqlArrays() {
	}

	/** A text array as a PostgreSQL array literal, for an array nested in another array's element. */
	static String literal(Iterable<String> elements) {
		StringBuilder literal = new StringBuilder("{");
		for (String element : elements) {
			if (literal.length() > 1) {
				literal.append(',');
			}
			literal.append('"').append(element.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
		}
		return literal.append('}').toString();
	}

	static AbstractSqlTypeValue of(String elementType, Object[] elements) {
		return new AbstractSqlTypeValue() {
			@Override
			protected Object createTypeValue(Connection connection, int sqlType, @org.jspecify.annotations.Nullable String typeName)
					throws SQLException {
				return connection.createArrayOf(elementType, elements);
			}
		};
	}

}
