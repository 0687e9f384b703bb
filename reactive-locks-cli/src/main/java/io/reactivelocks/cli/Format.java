package io.reactivelocks.cli;

import io.reactivelocks.Concept;
import io.reactivelocks.LockState;
import io.reactivelocks.admin.HeldGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The CLI's output lines: tables, JSON lines, lock states. */
final class Format {

    /** A deadline further away than this is no deadline. */
    private static final Duration NO_EXPIRY = Duration.ofDays(3650);

    private Format() {
    }

    static String concept(Concept c) {
        return c.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static String role(HeldGrant.Role r) {
        return r.name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param grants what {@code admin().list} returned
     * @return a table with a header line, columns padded
     */
    static List<String> table(List<HeldGrant> grants) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NAME", "CONCEPT", "ROLE", "TOKEN", "REMAINING", "WAITERS", "OWNER", "PAYLOAD"});
        for (HeldGrant g : grants) {
            rows.add(new String[] {g.name(), concept(g.concept()), role(g.role()), Long.toString(g.token()),
                g.remaining() == null ? "-" : Durations.format(g.remaining()),
                g.waiters() < 0 ? "-" : Integer.toString(g.waiters()), g.owner(),
                g.task() != null ? "task=" + oneLine(g.task()) : g.payload() == null ? "-" : oneLine(g.payload())});
        }
        int[] widths = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                widths[i] = Math.max(widths[i], r[i].length());
            }
        }
        List<String> lines = new ArrayList<>();
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                sb.append(r[i]);
                if (i < r.length - 1) {
                    sb.append(" ".repeat(widths[i] - r[i].length() + 2));
                }
            }
            lines.add(sb.toString().stripTrailing());
        }
        return lines;
    }

    /**
     * @param g a grant
     * @return it as one JSON object on one line
     */
    static String json(HeldGrant g) {
        return "{\"name\":" + quote(g.name()) + ",\"concept\":" + quote(concept(g.concept())) + ",\"role\":" + quote(role(g.role()))
                + ",\"token\":" + g.token() + ",\"remainingMillis\":" + (g.remaining() == null ? "null" : g.remaining().toMillis())
                + ",\"waiters\":" + (g.waiters() < 0 ? "null" : g.waiters()) + ",\"owner\":" + quote(g.owner())
                + ",\"payload\":" + (g.payload() == null ? "null" : quote(g.payload()))
                + (g.task() == null ? "" : ",\"task\":" + quote(g.task())) + "}";
    }

    /**
     * @param g a grant
     * @return it in words, on one line
     */
    static String grant(HeldGrant g) {
        return g.name() + " " + concept(g.concept()) + " " + role(g.role()) + " token=" + g.token() + " owner=" + g.owner()
                + (g.payload() == null ? "" : " payload=" + oneLine(g.payload())) + (g.task() == null ? "" : " task=" + oneLine(g.task()));
    }

    /**
     * @param s a lock state
     * @return it on one line: {@code NAME free} or {@code NAME held token=.. remaining=.. owner=.. payload=..}
     */
    static String state(LockState s) {
        if (s instanceof LockState.Held h) {
            long leftNanos = h.validUntilNanos() - System.nanoTime();
            // etcd and ZooKeeper keep no per-grant expiry (the session's): the deadline is "never"
            String left = h.validUntilNanos() == Long.MAX_VALUE || leftNanos > NO_EXPIRY.toNanos() ? "-"
                    : Durations.format(Duration.ofNanos(Math.max(0, leftNanos)));
            return h.name() + " held token=" + h.token() + " remaining=" + left + " owner=" + h.owner()
                    + (h.payload() == null ? "" : " payload=" + oneLine(h.payload()));
        }
        return s.name() + " free";
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    private static String oneLine(String s) {
        return s.replace("\n", "\\n").replace("\r", "\\r");
    }
}
