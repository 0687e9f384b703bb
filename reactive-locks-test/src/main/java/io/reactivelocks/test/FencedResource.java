package io.reactivelocks.test;

import io.reactivelocks.fencing.Fencing;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory model of a resource protected by a lock, that checks fencing tokens per key (the
 * storage side of Kleppmann's fencing argument). Thread-safe and non-blocking: each write decides
 * atomically per key (a {@link ConcurrentHashMap#compute} on that key only) and never waits on I/O.
 *
 * <p><b>Rule of the fenced resource</b> ({@link #fenced()}): the library's one rule,
 * {@link Fencing#admits}: a write for a key is accepted when its token is greater than <em>or equal
 * to</em> the highest token seen so far for that key, and rejected when it is lower (a stale write). Equal is accepted because the same lease may write several times
 * under one token; a lower token can only come from a holder whose lease was superseded. Rejected
 * writes change nothing. Keys are independent.
 *
 * <p>{@link #unfenced()} accepts every write (like a resource that ignores tokens) but still counts the
 * writes that a fenced one would have rejected in {@link #staleWritesAccepted()}, so a test can show
 * what fencing prevents. The fenced resource always reports 0 there.
 *
 * <p>Every write is recorded ({@link #writes()}) with a sequence number that is unique and, for any
 * one key, increases in the order the decisions were made.
 */
public final class FencedResource {

    /**
     * One recorded write.
     *
     * @param sequence the order of the decision (per key: increasing in decision order)
     * @param key      the key written
     * @param token    the fencing token the writer presented
     * @param value    the value it wanted to write
     * @param accepted whether the resource took the write
     * @param stale    whether the token was lower than the highest token already seen for the key
     */
    public record Write(long sequence, String key, long token, String value, boolean accepted, boolean stale) {
    }

    /** The state of one key: the highest token seen and the value of the last accepted write. */
    private record KeyState(long highestToken, String value) {
    }

    private final boolean fenced;
    private final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();
    private final Queue<Write> log = new ConcurrentLinkedQueue<>();
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong staleRejected = new AtomicLong();
    private final AtomicLong staleAccepted = new AtomicLong();

    private FencedResource(boolean fenced) {
        this.fenced = fenced;
    }

    /**
     * Creates a resource that rejects writes whose token is lower than the highest seen for the key.
     *
     * @return an empty fenced resource
     */
    public static FencedResource fenced() {
        return new FencedResource(true);
    }

    /**
     * Creates a resource that accepts every write but counts the stale ones it accepted.
     *
     * @return an empty unfenced resource
     */
    public static FencedResource unfenced() {
        return new FencedResource(false);
    }

    /** @return true when this resource checks tokens */
    public boolean isFenced() {
        return fenced;
    }

    /**
     * Writes {@code value} to {@code key} with a fencing token: accepted when {@code token} is at least
     * the highest token seen for the key (always, when unfenced). Never blocks.
     *
     * @param key   the key to write, not null
     * @param token the writer's fencing token
     * @param value the value, not null
     * @return true when the write was accepted
     */
    public boolean write(String key, long token, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Write[] decided = new Write[1];
        keys.compute(key, (k, state) -> {
            boolean stale = state != null && !Fencing.admits(state.highestToken(), token);
            boolean accept = !fenced || !stale;
            decided[0] = new Write(sequence.incrementAndGet(), k, token, value, accept, stale);
            log.add(decided[0]);
            if (!accept) {
                return state;
            }
            long highest = state == null ? token : Math.max(state.highestToken(), token);
            return new KeyState(highest, value);
        });
        Write w = decided[0];
        if (w.accepted()) {
            accepted.incrementAndGet();
            if (w.stale()) {
                staleAccepted.incrementAndGet();
            }
        } else {
            staleRejected.incrementAndGet();
        }
        return w.accepted();
    }

    /**
     * Reads the value of the last accepted write for a key.
     *
     * @param key the key
     * @return the current value, empty when nothing was accepted for the key
     */
    public Optional<String> read(String key) {
        KeyState state = keys.get(Objects.requireNonNull(key, "key"));
        return state == null ? Optional.empty() : Optional.of(state.value());
    }

    /**
     * Tells the highest token seen (accepted) for a key.
     *
     * @param key the key
     * @return the highest token, empty when nothing was accepted for the key
     */
    public OptionalLong highestToken(String key) {
        KeyState state = keys.get(Objects.requireNonNull(key, "key"));
        return state == null ? OptionalLong.empty() : OptionalLong.of(state.highestToken());
    }

    /** @return every write so far, accepted or not, ordered by sequence number */
    public List<Write> writes() {
        List<Write> all = new ArrayList<>(log);
        all.sort(Comparator.comparingLong(Write::sequence));
        return all;
    }

    /**
     * Lists the writes to one key.
     *
     * @param key the key
     * @return the writes to {@code key}, ordered by sequence number
     */
    public List<Write> writes(String key) {
        Objects.requireNonNull(key, "key");
        return writes().stream().filter(w -> w.key().equals(key)).toList();
    }

    /** @return how many writes were accepted (stale ones included when unfenced) */
    public long writesAccepted() {
        return accepted.get();
    }

    /** @return how many writes were rejected because their token was stale (always 0 when unfenced) */
    public long staleWritesRejected() {
        return staleRejected.get();
    }

    /** @return how many writes with a stale token were accepted: the damage fencing prevents (always 0 when fenced) */
    public long staleWritesAccepted() {
        return staleAccepted.get();
    }

    @Override
    public String toString() {
        return (fenced ? "FencedResource" : "UnfencedResource") + "[accepted " + accepted.get() + ", stale rejected "
                + staleRejected.get() + ", stale accepted " + staleAccepted.get() + "]";
    }
}
