package dev.a2.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import javax.sql.DataSource;

/** TEMPORARY: times JDBC calls made on threads whose name starts with a prefix. */
final class JdbcTimer {

	static final Map<String, LongAdder[]> times = new ConcurrentHashMap<>();

	static DataSource wrap(DataSource target, String threadPrefix) {
		return (DataSource) Proxy.newProxyInstance(JdbcTimer.class.getClassLoader(), new Class<?>[] { DataSource.class },
				timed(target, threadPrefix, "ds", null));
	}

	private static InvocationHandler timed(Object target, String prefix, String kind, String sql) {
		return (proxy, method, args) -> {
			boolean on = Thread.currentThread().getName().startsWith(prefix);
			long start = System.nanoTime();
			Object result;
			try {
				result = method.invoke(target, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
			long took = System.nanoTime() - start;
			String name = method.getName();
			if (on && !name.startsWith("set") && !name.startsWith("get") || on && name.equals("getConnection") || on && name.equals("setAutoCommit")) {
				String key = kind + "." + name + ((sql != null) ? " [" + sql + "]" : "");
				LongAdder[] t = times.computeIfAbsent(key, (k) -> new LongAdder[] { new LongAdder(), new LongAdder() });
				t[0].increment();
				t[1].add(took);
			}
			if (result instanceof Connection c) {
				return Proxy.newProxyInstance(JdbcTimer.class.getClassLoader(), new Class<?>[] { Connection.class }, timed(c, prefix, "con", null));
			}
			if (result instanceof PreparedStatement p) {
				String text = (args != null && args.length > 0 && args[0] instanceof String s) ? s.strip().replaceAll("\\s+", " ") : "?";
				return Proxy.newProxyInstance(JdbcTimer.class.getClassLoader(), new Class<?>[] { PreparedStatement.class },
						timed(p, prefix, "ps", text.substring(0, Math.min(40, text.length()))));
			}
			if (result instanceof Statement st) {
				return Proxy.newProxyInstance(JdbcTimer.class.getClassLoader(), new Class<?>[] { Statement.class }, timed(st, prefix, "st", null));
			}
			return result;
		};
	}

	static void print() {
		Map<String, LongAdder[]> sorted = new TreeMap<>(times);
		sorted.forEach((k, v) -> System.out.printf("  jdbc %-70s n=%6d mean=%7.1f us%n", k, v[0].sum(), v[1].sum() / 1e3 / Math.max(1, v[0].sum())));
		times.clear();
	}

}
