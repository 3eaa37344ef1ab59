package dev.a2.drain;

import java.util.concurrent.ConcurrentHashMap;

/** TEMPORARY: nanoTime stamps per session along append to handler start. */
public final class LatencyProbe {

	public static final int STAGES = 10;

	public static final boolean ON = Boolean.getBoolean("a2.probe");

	private static final ConcurrentHashMap<String, long[]> stamps = new ConcurrentHashMap<>();

	private LatencyProbe() {
	}

	public static void stamp(String session, int stage) {
		if (ON) {
			long[] s = stamps.computeIfAbsent(session, (k) -> new long[STAGES]);
			if (s[stage] == 0) {
				s[stage] = System.nanoTime();
			}
		}
	}

	public static long[] take(String session) {
		long[] s = stamps.remove(session);
		return (s != null) ? s : new long[STAGES];
	}

}
