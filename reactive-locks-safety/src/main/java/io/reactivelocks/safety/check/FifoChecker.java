package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * FIFO where promised (fair names): when waiter x's place in the line was confirmed (its last
 * {@code enqueue} before its grant was answered {@code in-line}) before waiter y's last request was
 * sent, and y sent it before x was granted, both were granted and x's token must be below y's (grants
 * are ordered by their tokens). Waits that overlap a fault, or the two lease times after it (a
 * frozen or cut-off waiter's entry expires by design; a restarted store may forget the line), are not
 * judged.
 */
public final class FifoChecker implements HistoryChecker {

    /** Makes the checker. */
    public FifoChecker() {
    }

    @Override
    public String name() {
        return "fifo";
    }

    /** One granted wait: its acquire, last request, in-line answer (or null) and grant. */
    private record Wait(HistoryEvent start, HistoryEvent asked, @Nullable HistoryEvent inLine, HistoryEvent grant) {
    }

    @Override
    public CheckVerdict check(History history) {
        List<long[]> faults = new ArrayList<>();
        Map<String, Long> faultStart = new HashMap<>();
        for (HistoryEvent e : history.events()) {
            if (e.client().equals("nemesis")) {
                if (e.type() == HistoryEvent.Type.INVOKE) {
                    faultStart.put(e.op(), e.t());
                } else {
                    Long s = faultStart.remove(e.op());
                    faults.add(new long[] {s == null ? e.t() : s, e.t() + 2 * history.leaseNanos()});
                }
            }
        }
        faultStart.values().forEach(s -> faults.add(new long[] {s, Long.MAX_VALUE}));

        Map<String, List<Wait>> waits = new HashMap<>();
        Map<String, HistoryEvent> started = new HashMap<>();
        Map<String, HistoryEvent> asked = new HashMap<>();
        Map<String, HistoryEvent> inLine = new HashMap<>();
        for (HistoryEvent e : history.events()) {
            if (e.name() == null || !history.primitiveOf(e.name()).equals("fair")) {
                continue;
            }
            String key = e.client() + "/" + e.name();
            switch (e.op()) {
                case "acquire" -> {
                    if (e.type() == HistoryEvent.Type.INVOKE) {
                        started.put(key, e);
                        asked.remove(key);
                        inLine.remove(key);
                    } else {
                        HistoryEvent s = started.remove(key);
                        HistoryEvent a = asked.remove(key);
                        HistoryEvent l = inLine.remove(key);
                        if (e.isOk() && s != null && e.token() != null) {
                            waits.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(new Wait(s, a == null ? s : a, l, e));
                        }
                    }
                }
                case "enqueue" -> {
                    asked.put(key, e);
                    inLine.remove(key);
                }
                case "in-line" -> inLine.put(key, e);
                default -> {
                }
            }
        }
        long pairs = 0;
        for (List<Wait> w : waits.values()) {
            for (Wait x : w) {
                if (x.inLine() == null || disturbed(x, faults)) {
                    continue;
                }
                for (Wait y : w) {
                    if (x == y || x.start().client().equals(y.start().client()) || x.inLine().t() >= y.asked().t()
                            || y.asked().t() >= x.grant().t() || disturbed(y, faults)) {
                        continue;
                    }
                    pairs++;
                    if (x.grant().token() >= y.grant().token()) {
                        return CheckVerdict.invalid(name(), x.grant().client() + " was in line on " + x.grant().name() + " before "
                                + y.grant().client() + " asked, yet was granted token " + x.grant().token() + " ≥ " + y.grant().token(),
                                List.of(x.asked(), x.inLine(), y.asked(), y.grant(), x.grant()));
                    }
                }
            }
        }
        return CheckVerdict.valid(name(), pairs + " pairs of waits judged, all granted in line order");
    }

    private static boolean disturbed(Wait w, List<long[]> faults) {
        for (long[] f : faults) {
            if (w.start().t() < f[1] && w.grant().t() > f[0]) {
                return true;
            }
        }
        return false;
    }
}
