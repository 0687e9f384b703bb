package io.reactivelocks.safety.check;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Linearizability of the fenced register (the arbiter) on each mutex, fair-lock and read-write name:
 * is there a total order of the register's operations, consistent with their real-time order (an
 * operation completed before another was invoked comes first), in which each operation's outcome is
 * what a sequential fenced register would have answered? The register holds a value (0 at first), the
 * highest token seen and the last writer's token; a fenced read or write is accepted when its token is
 * at least the highest seen (a reader's: at least the last writer's), then raises the highest token
 * (a write also sets the value, a writer's request also the last writer's token), and is refused
 * otherwise, changing nothing; a plain {@code write} or a {@code read} without a token is never refused.
 *
 * <p>The search is Wing and Gong's with Lowe's memoisation (as in Knossos and Porcupine): operations
 * are linearized in turn at their invocation while no pending operation's completion has passed,
 * backtracking when one has, and a (linearized set, register state) pair already explored is not
 * explored again. An operation with an unknown outcome (info, or never completed) completes at the
 * end of time and may be linearized anywhere after its invocation with either outcome — at the end,
 * which is the same as never having taken effect. The search is bounded ({@link #LinearizabilityChecker(long)}):
 * past the bound the verdict is unknown rather than a hang.
 */
public final class LinearizabilityChecker implements HistoryChecker {

    /** The default bound: explored steps per name. */
    public static final long DEFAULT_STEPS = 5_000_000;

    private final long maxSteps;

    /** A checker with the default bound ({@value #DEFAULT_STEPS} steps per name). */
    public LinearizabilityChecker() {
        this(DEFAULT_STEPS);
    }

    /**
     * @param maxSteps the most search steps per name before the verdict is unknown
     */
    public LinearizabilityChecker(long maxSteps) {
        if (maxSteps < 1) {
            throw new IllegalArgumentException("maxSteps must be positive, was " + maxSteps);
        }
        this.maxSteps = maxSteps;
    }

    @Override
    public String name() {
        return "linearizability";
    }

    /** A register operation: what was asked, and what came back (unknown: anything). */
    private record Op(int id, History.Operation op, boolean write, @Nullable Long token, boolean reader, long value,
                      boolean unknown, boolean accepted, @Nullable Long read) {
        long call() {
            return op.invoke().t();
        }

        long ret() {
            return unknown ? Long.MAX_VALUE : op.completion().t();
        }
    }

    /** The register's state. */
    private record State(long value, long highest, long lastWriter) {
    }

    /** The state after {@code op}, or null when the outcome seen is not what the register would answer. */
    private static @Nullable State step(State s, Op op) {
        boolean admits;
        if (op.token() == null) {
            admits = true;
        } else {
            long floor = op.reader() ? s.lastWriter() : s.highest();
            admits = op.token() >= floor;
        }
        if (!op.unknown()) {
            if (admits != op.accepted()) {
                return null;
            }
            if (admits && !op.write() && op.read() != null && op.read() != s.value()) {
                return null;
            }
        }
        if (!admits) {
            return s;
        }
        long token = op.token() == null ? Long.MIN_VALUE : op.token();
        return new State(op.write() ? op.value() : s.value(), Math.max(s.highest(), token),
                op.reader() ? s.lastWriter() : Math.max(s.lastWriter(), token));
    }

    @Override
    public CheckVerdict check(History history) {
        Map<String, String> modes = ArbiterExclusionChecker.modes(history);
        Map<String, List<History.Operation>> byName = new LinkedHashMap<>();
        for (String kind : List.of("read", "fenced-write", "write")) {
            for (History.Operation o : history.operations(kind)) {
                String name = o.invoke().name();
                if (name != null && !history.primitiveOf(name).equals("semaphore")) {
                    byName.computeIfAbsent(name, n -> new ArrayList<>()).add(o);
                }
            }
        }
        long ops = 0;
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, List<History.Operation>> e : byName.entrySet()) {
            List<Op> list = new ArrayList<>();
            for (History.Operation o : e.getValue()) {
                HistoryEvent inv = o.invoke();
                HistoryEvent done = o.completion();
                boolean write = !inv.op().equals("read");
                Long token = inv.op().equals("write") ? null : inv.token();
                boolean reader = "r".equals(inv.mode()) || "r".equals(modes.get(inv.name() + "/" + inv.token()));
                boolean isUnknown = o.unknown();
                boolean accepted = done.isOk() && !"refused".equals(done.verdict());
                long value = inv.value() == null ? 0 : inv.value();
                list.add(new Op(list.size(), o, write, token, reader, value, isUnknown, accepted,
                        write || !accepted ? null : done.value()));
            }
            ops += list.size();
            Result r = search(list);
            if (r.status == CheckVerdict.Status.INVALID) {
                List<HistoryEvent> offending = new ArrayList<>();
                for (Op op : r.context) {
                    offending.add(op.op().invoke());
                    if (op.op().completion().index() >= 0) {
                        offending.add(op.op().completion());
                    }
                }
                return CheckVerdict.invalid(name(), "the register operations on " + e.getKey() + " are not linearizable: no order"
                        + " of them explains the outcome of " + describe(r.context.get(0)) + " (with the operations linearized just"
                        + " before it, and those concurrent with it)", offending);
            }
            if (r.status == CheckVerdict.Status.UNKNOWN) {
                unknown.add(e.getKey());
            }
        }
        if (!unknown.isEmpty()) {
            return new CheckVerdict(name(), CheckVerdict.Status.UNKNOWN, "the search on " + unknown + " passed its bound of "
                    + maxSteps + " steps", List.of());
        }
        return CheckVerdict.valid(name(), ops + " register operations on " + byName.size() + " names, linearizable");
    }

    private static String describe(Op op) {
        HistoryEvent c = op.op().completion();
        return op.op().invoke().op() + " by " + op.op().invoke().client() + " with token " + op.token()
                + (op.unknown() ? " (outcome unknown)" : " (" + (op.accepted() ? "accepted" : "refused")
                + (op.read() != null ? ", read " + op.read() : "") + ")") + " at #" + c.index();
    }

    private record Result(CheckVerdict.Status status, List<Op> context) {
    }

    /** One call or return in the search's list. */
    private static final class Node {
        final @Nullable Op op;
        final boolean call;
        @Nullable Node match;
        @Nullable Node prev;
        @Nullable Node next;

        Node(@Nullable Op op, boolean call) {
            this.op = op;
            this.call = call;
        }
    }

    private record Key(BitSet linearized, State state) {
    }

    private record Frame(Node call, State state) {
    }

    private Result search(List<Op> ops) {
        List<Node> nodes = new ArrayList<>();
        for (Op op : ops) {
            Node call = new Node(op, true);
            Node ret = new Node(op, false);
            call.match = ret;
            nodes.add(call);
            nodes.add(ret);
        }
        // by time; at one instant calls first (they overlap), then by operation
        nodes.sort(Comparator.<Node>comparingLong(n -> n.call ? n.op.call() : n.op.ret())
                .thenComparing(n -> !n.call).thenComparingInt(n -> n.op.id()));
        Node head = new Node(null, false);
        Node last = head;
        for (Node n : nodes) {
            last.next = n;
            n.prev = last;
            last = n;
        }
        State state = new State(0, Long.MIN_VALUE, Long.MIN_VALUE);
        BitSet linearized = new BitSet(ops.size());
        Set<Key> cache = new HashSet<>();
        Deque<Frame> calls = new ArrayDeque<>();
        Node entry = head.next;
        long steps = 0;
        int deepest = -1;
        List<Op> context = List.of();
        while (head.next != null) {
            if (++steps > maxSteps) {
                return new Result(CheckVerdict.Status.UNKNOWN, List.of());
            }
            if (entry == null) {
                throw new IllegalStateException("linearizability search ran off its list");
            }
            Op op = entry.op;
            if (entry.call) {
                State next = step(state, op);
                if (next != null) {
                    BitSet with = (BitSet) linearized.clone();
                    with.set(op.id());
                    if (cache.add(new Key(with, next))) {
                        calls.push(new Frame(entry, state));
                        state = next;
                        linearized.set(op.id());
                        lift(entry);
                        entry = head.next;
                        continue;
                    }
                }
                entry = entry.next;
            } else {
                // a completion reached while its operation is not linearized: undo the last choice
                if (calls.size() > deepest) {
                    deepest = calls.size();
                    List<Op> ctx = new ArrayList<>();
                    ctx.add(op);
                    calls.stream().limit(3).forEach(f -> ctx.add(f.call().op));
                    for (Node n = head.next; n != null && n != entry; n = n.next) {
                        if (n.call && n.op != op && ctx.size() < 8) {
                            ctx.add(n.op);
                        }
                    }
                    context = ctx;
                }
                if (calls.isEmpty()) {
                    return new Result(CheckVerdict.Status.INVALID, context);
                }
                Frame f = calls.pop();
                state = f.state();
                linearized.clear(f.call().op.id());
                unlift(f.call());
                entry = f.call().next;
            }
        }
        return new Result(CheckVerdict.Status.VALID, List.of());
    }

    private static void lift(Node call) {
        call.prev.next = call.next;
        if (call.next != null) {
            call.next.prev = call.prev;
        }
        Node ret = call.match;
        ret.prev.next = ret.next;
        if (ret.next != null) {
            ret.next.prev = ret.prev;
        }
    }

    private static void unlift(Node call) {
        Node ret = call.match;
        ret.prev.next = ret;
        if (ret.next != null) {
            ret.next.prev = ret;
        }
        call.prev.next = call;
        if (call.next != null) {
            call.next.prev = call;
        }
    }
}
