package io.reactivelocks.benchmarks.load;

import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** Progress lines on standard error. */
final class Log {

    private Log() {
    }

    /** @return the exception and its root cause, on one line */
    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? e.toString() : e + " <- " + root;
    }

    static void info(String format, Object... args) {
        System.err.println(LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + " " + String.format(Locale.ROOT, format, args));
    }
}
