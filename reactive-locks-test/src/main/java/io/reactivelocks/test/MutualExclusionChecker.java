package io.reactivelocks.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Records who holds which lock when, and reports any moment where two different owners were inside
 * the same lock name at once. Call {@link #begin(String, String, long)} right <em>after</em> the lock
 * is granted and {@link Hold#end()} right <em>before</em> it is released (not after the release
 * completes: another holder may legitimately begin in between, which would show as an overlap).
 *
 * <p>Overlaps are detected exactly, when they happen: each begin checks the holds open at that moment
 * for the same name (a tiny per-name critical section, no I/O). Thread-safe and cheap enough for
 * stress tests with many threads. Times come from {@link System#nanoTime()} unless another clock is
 * given (for virtual time).
 */
public final class MutualExclusionChecker {

    /**
     * One hold of a lock.
     *
     * @param name       the lock name
     * @param owner      the holder's owner id
     * @param token      the fencing token of the grant
     * @param order      the order of {@code begin} calls for this name, from 0
     * @param startNanos the clock at begin
     * @param endNanos   the clock at end, or {@link Long#MAX_VALUE} while still held
     */
    public record Interval(String name, String owner, long token, long order, long startNanos, long endNanos) {

        /** @return true while the hold has not ended */
        public boolean open() {
            return endNanos == Long.MAX_VALUE;
        }
    }

    /**
     * Two holds of the same name by different owners that were open at the same time.
     *
     * @param first  the hold that began first (as it was when the overlap was seen)
     * @param second the hold that began while {@code first} was open
     */
    public record Overlap(Interval first, Interval second) {
        @Override
        public String toString() {
            return "'" + first.name() + "': " + first.owner() + " (token " + first.token() + ") still held it when "
                    + second.owner() + " (token " + second.token() + ") began";
        }
    }

    /** A hold in progress; {@link #end()} (or {@link #close()}) marks its end. */
    public final class Hold implements AutoCloseable {
        private final NameState state;
        private final String owner;
        private final long token;
        private final long order;
        private final long startNanos;
        private final AtomicBoolean ended = new AtomicBoolean();

        private Hold(NameState state, String owner, long token, long order, long startNanos) {
            this.state = state;
            this.owner = owner;
            this.token = token;
            this.order = order;
            this.startNanos = startNanos;
        }

        /** @return the lock name */
        public String name() {
            return state.name;
        }

        /** @return the owner id given to begin */
        public String owner() {
            return owner;
        }

        /** @return the fencing token given to begin */
        public long token() {
            return token;
        }

        /** Ends the hold; only the first call counts, later ones do nothing. */
        public void end() {
            if (ended.compareAndSet(false, true)) {
                state.end(this, clock.getAsLong());
            }
        }

        /** Same as {@link #end()}, for try-with-resources. */
        @Override
        public void close() {
            end();
        }

        private Interval interval(long endNanos) {
            return new Interval(state.name, owner, token, order, startNanos, endNanos);
        }
    }

    /** Per-name state; all access under its own monitor, each critical section is a few list operations. */
    private final class NameState {
        private final String name;
        private final List<Hold> open = new ArrayList<>();
        /** Every hold of this name, indexed by its begin order; open ones end at {@code Long.MAX_VALUE}. */
        private final List<Interval> holds = new ArrayList<>();

        NameState(String name) {
            this.name = name;
        }

        Hold begin(String owner, long token) {
            List<Overlap> found = new ArrayList<>();
            Hold hold;
            synchronized (this) {
                hold = new Hold(this, owner, token, holds.size(), clock.getAsLong());
                for (Hold other : open) {
                    if (!other.owner.equals(owner)) {
                        found.add(new Overlap(other.interval(Long.MAX_VALUE), hold.interval(Long.MAX_VALUE)));
                    }
                }
                open.add(hold);
                holds.add(hold.interval(Long.MAX_VALUE));
            }
            overlaps.addAll(found);
            return hold;
        }

        synchronized void end(Hold hold, long now) {
            open.remove(hold);
            holds.set((int) hold.order, hold.interval(now));
        }

        synchronized List<Interval> intervals() {
            return List.copyOf(holds);
        }
    }

    private final LongSupplier clock;
    private final ConcurrentHashMap<String, NameState> names = new ConcurrentHashMap<>();
    private final List<Overlap> overlaps = new CopyOnWriteArrayList<>();

    /** Creates a checker timed by {@link System#nanoTime()}. */
    public MutualExclusionChecker() {
        this(System::nanoTime);
    }

    /**
     * Creates a checker timed by the given clock (for example a virtual-time scheduler's clock in nanoseconds).
     *
     * @param nanoClock returns the current time in nanoseconds
     */
    public MutualExclusionChecker(LongSupplier nanoClock) {
        this.clock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    /**
     * Records that {@code owner} now holds {@code name} with {@code token}; if another owner holds the
     * same name at this moment, an {@link Overlap} is recorded. The same owner beginning again while it
     * holds the name (reentrancy) is not an overlap.
     *
     * @param name  the lock name, not null
     * @param owner the holder's owner id, not null
     * @param token the fencing token of the grant
     * @return the hold, to {@link Hold#end() end} before releasing the lock
     */
    public Hold begin(String name, String owner, long token) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return names.computeIfAbsent(name, NameState::new).begin(owner, token);
    }

    /** @return every overlap seen so far, in the order they were seen */
    public List<Overlap> overlaps() {
        return List.copyOf(overlaps);
    }

    /**
     * Lists the holds of one name in the order they began; open ones have {@code endNanos == Long.MAX_VALUE}.
     *
     * @param name the lock name
     * @return the holds of {@code name}, empty when it was never held
     */
    public List<Interval> intervals(String name) {
        NameState state = names.get(Objects.requireNonNull(name, "name"));
        return state == null ? List.of() : state.intervals();
    }

    /** @return the lock names seen so far */
    public List<String> names() {
        return List.copyOf(names.keySet());
    }

    /**
     * Fails when two owners were ever inside the same name at once.
     *
     * @throws AssertionError listing the overlaps
     */
    public void assertNoOverlap() {
        List<Overlap> seen = overlaps();
        if (!seen.isEmpty()) {
            throw new AssertionError(seen.size() + " mutual-exclusion violation(s):\n  "
                    + seen.stream().map(Overlap::toString).collect(Collectors.joining("\n  ")));
        }
    }

    /**
     * Fails unless the tokens of successive holds of {@code name}, in the order they began, strictly
     * increase. A hold by the same owner with the same token as the previous one (the same lease
     * entering again) is allowed.
     *
     * @param name the lock name
     * @throws AssertionError naming the first pair out of order
     */
    public void assertTokensStrictlyIncreasing(String name) {
        List<Interval> all = intervals(name);
        for (int i = 1; i < all.size(); i++) {
            Interval previous = all.get(i - 1);
            Interval next = all.get(i);
            boolean sameLease = previous.owner().equals(next.owner()) && previous.token() == next.token();
            if (!sameLease && next.token() <= previous.token()) {
                throw new AssertionError("fencing tokens of '" + name + "' do not strictly increase: hold #"
                        + previous.order() + " by " + previous.owner() + " had token " + previous.token() + ", hold #"
                        + next.order() + " by " + next.owner() + " has token " + next.token());
            }
        }
    }

    @Override
    public String toString() {
        return "MutualExclusionChecker[" + names.size() + " names, " + overlaps.size() + " overlaps]";
    }
}
