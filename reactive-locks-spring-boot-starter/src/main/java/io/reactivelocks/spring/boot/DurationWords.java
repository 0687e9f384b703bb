package io.reactivelocks.spring.boot;

import java.time.Duration;

/** Durations as people write them in messages: {@code "2 s"}, {@code "500 ms"}. */
final class DurationWords {

    private DurationWords() {
    }

    /** @return whole seconds as {@code "2 s"}, whole milliseconds as {@code "500 ms"}, anything else in ISO-8601 */
    static String of(Duration d) {
        if (d.toNanos() % 1_000_000_000L == 0) {
            return d.toSeconds() + " s";
        }
        if (d.toNanos() % 1_000_000L == 0) {
            return d.toMillis() + " ms";
        }
        return d.toString();
    }
}
