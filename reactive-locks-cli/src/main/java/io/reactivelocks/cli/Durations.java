package io.reactivelocks.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Durations on the command line: {@code 500ms}, {@code 10s}, {@code 1.5s}, {@code 2m}, {@code 1h}, or ISO {@code PT10S}. */
final class Durations implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.startsWith("pt") || v.startsWith("p")) {
            try {
                return check(value, Duration.parse(value.trim().toUpperCase(Locale.ROOT)));
            } catch (DateTimeParseException e) {
                throw notADuration(value);
            }
        }
        Matcher m = SIMPLE.matcher(v);
        if (!m.matches()) {
            throw notADuration(value);
        }
        double amount = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> amount;
            case "m" -> amount * 60_000;
            case "h" -> amount * 3_600_000;
            default -> amount * 1000;
        };
        if (millis > 100L * 365 * 24 * 3_600_000) {
            throw new CommandLine.TypeConversionException("'" + value + "' is too long a duration");
        }
        return check(value, Duration.ofMillis(Math.round(millis)));
    }

    private static Duration check(String value, Duration d) {
        if (d.isNegative()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is negative");
        }
        return d;
    }

    private static CommandLine.TypeConversionException notADuration(String value) {
        return new CommandLine.TypeConversionException("'" + value + "' is not a duration (e.g. 500ms, 10s, 1.5s, 2m, 1h, PT10S)");
    }

    /**
     * @param d a duration
     * @return it in words for a person: {@code 850ms}, {@code 4.2s}, {@code 3m05s}
     */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = ms / 1000;
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
    }
}
