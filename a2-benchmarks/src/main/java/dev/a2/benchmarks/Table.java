package dev.a2.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The printed result: one row per measurement with A2's figure, the baseline's and their ratio.
 */
final class Table {

	private final String title;

	private final String baseline;

	private final List<String[]> rows = new ArrayList<>();

	Table(String title) {
		this(title, "baseline (plain JDBC)");
	}

	/** A table whose second column is {@code baseline}, such as a peer library. */
	Table(String title, String baseline) {
		this.title = title;
		this.baseline = baseline;
	}

	/** A measurement beside its baseline; {@code figures} is {A2, baseline}. */
	void row(String name, double[] figures) {
		this.rows.add(new String[] { name, number(figures[0]), number(figures[1]),
				String.format(Locale.ROOT, "%.2f", figures[0] / figures[1]) });
		System.out.println("  measured: " + String.join(" | ", this.rows.get(this.rows.size() - 1)));
	}

	/** A measurement without a baseline, such as a latency. */
	void row(String name, String figure) {
		this.rows.add(new String[] { name, figure, "", "" });
		System.out.println("  measured: " + name + " | " + figure);
	}

	/** A measurement whose figures are not plain rates, such as latencies; the ratio is said by the caller. */
	void row(String name, String a2, String baseline, String ratio) {
		this.rows.add(new String[] { name, a2, baseline, ratio });
		System.out.println("  measured: " + String.join(" | ", this.rows.get(this.rows.size() - 1)));
	}

	boolean isEmpty() {
		return this.rows.isEmpty();
	}

	void print() {
		String[] header = { "measurement", "A2", this.baseline, "ratio" };
		int[] widths = new int[header.length];
		for (int i = 0; i < header.length; i++) {
			widths[i] = header[i].length();
			for (String[] row : this.rows) {
				widths[i] = Math.max(widths[i], row[i].length());
			}
		}
		StringBuilder out = new StringBuilder("\n").append(this.title).append("\n\n");
		line(out, header, widths);
		StringBuilder rule = new StringBuilder("|");
		for (int width : widths) {
			rule.append("-".repeat(width + 2)).append('|');
		}
		out.append(rule).append('\n');
		for (String[] row : this.rows) {
			line(out, row, widths);
		}
		System.out.println(out);
	}

	private static void line(StringBuilder out, String[] cells, int[] widths) {
		out.append('|');
		for (int i = 0; i < cells.length; i++) {
			String cell = cells[i];
			String padded = (i == 0) ? String.format("%-" + widths[i] + "s", cell) : String.format("%" + widths[i] + "s", cell);
			out.append(' ').append(padded).append(" |");
		}
		out.append('\n');
	}

	private static String number(double value) {
		return String.format(Locale.ROOT, "%,.0f", value);
	}

}
