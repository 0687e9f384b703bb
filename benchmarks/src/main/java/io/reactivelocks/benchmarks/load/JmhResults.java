package io.reactivelocks.benchmarks.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** B5: the JMH CSV ({@code -rf csv}) of EngineOverheadBenchmark run with {@code -prof gc}. */
final class JmhResults {

    /** One benchmark method: time per operation and bytes allocated per operation. */
    record Row(String benchmark, double score, double error, String unit, double bytesPerOp, double bytesError) {
    }

    private JmhResults() {
    }

    static List<Row> read(Path csv) {
        if (!Files.isRegularFile(csv)) {
            return List.of();
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(csv);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, double[]> primary = new LinkedHashMap<>();
        Map<String, String> units = new LinkedHashMap<>();
        Map<String, double[]> norm = new LinkedHashMap<>();
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            List<String> f = split(line);
            if (f.size() < 7) {
                continue;
            }
            String bench = f.get(0);
            String head = bench.substring(0, indexOfSecondaryOrEnd(bench));
            String shortName = bench.substring(head.lastIndexOf('.') + 1);
            int sec = indexOfSecondary(shortName);
            double score = parse(f.get(4));
            double err = parse(f.get(5));
            if (sec < 0) {
                primary.put(shortName, new double[] {score, err});
                units.put(shortName, f.get(6));
            } else if (shortName.substring(sec + 1).equals("gc.alloc.rate.norm")) {
                norm.put(shortName.substring(0, sec), new double[] {score, err});
            }
        }
        List<Row> rows = new ArrayList<>();
        primary.forEach((k, v) -> {
            double[] b = norm.getOrDefault(k, new double[] {Double.NaN, Double.NaN});
            rows.add(new Row(k, v[0], v[1], units.get(k), b[0], b[1]));
        });
        return rows;
    }

    private static int indexOfSecondary(String s) {
        int i = s.indexOf(':');
        int j = s.indexOf('\u00b7');
        if (i < 0) {
            return j;
        }
        return j < 0 ? i : Math.min(i, j);
    }

    private static int indexOfSecondaryOrEnd(String s) {
        int i = indexOfSecondary(s);
        return i < 0 ? s.length() : i;
    }

    private static double parse(String s) {
        try {
            return Double.parseDouble(s.replace(",", "."));
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }
}
