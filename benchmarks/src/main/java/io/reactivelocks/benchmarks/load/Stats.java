package io.reactivelocks.benchmarks.load;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** Small helpers: medians and number formatting for the report. */
final class Stats {

    private Stats() {
    }

    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    static String us(double nanos) {
        if (Double.isNaN(nanos)) {
            return "–";
        }
        double us = nanos / 1000.0;
        return us >= 100 ? String.format(Locale.ROOT, "%.0f", us) : String.format(Locale.ROOT, "%.1f", us);
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (Math.abs(v) >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (Math.abs(v) >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String ratio(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return String.format(Locale.ROOT, v < 0.1 ? "%.4f×" : "%.2f×", v);
    }
}
