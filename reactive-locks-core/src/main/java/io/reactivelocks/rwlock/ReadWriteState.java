package io.reactivelocks.rwlock;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link ReadWriteLock#observe} reports: the unexpired readers, the writer and the writers
 * waiting (whose intents block new readers under the writer-preferring policy).
 *
 * @param name           the lock name
 * @param readers        the readers, in token order
 * @param writer         the writer, or {@code null} when none holds
 * @param waitingWriters the owner ids of the writers waiting with an unexpired intent
 */
public record ReadWriteState(String name, List<Holder> readers, @Nullable Holder writer, List<String> waitingWriters) {

    /** Checks and copies the fields. */
    public ReadWriteState {
        Objects.requireNonNull(name, "name");
        readers = List.copyOf(Objects.requireNonNull(readers, "readers"));
        waitingWriters = List.copyOf(Objects.requireNonNull(waitingWriters, "waitingWriters"));
    }

    /** @return whether no one holds the lock (writers may still wait) */
    public boolean isFree() {
        return readers.isEmpty() && writer == null;
    }

    /**
     * One grant.
     *
     * @param owner           the grant's owner id
     * @param token           its fencing token
     * @param validUntilNanos when, on the observing side's monotonic clock, it expires unless renewed
     *                        (an estimate from the store's remaining TTL; {@link Long#MAX_VALUE} when
     *                        the grant lives as long as its holder's session)
     */
    public record Holder(String owner, long token, long validUntilNanos) {
        /** Checks the fields. */
        public Holder {
            Objects.requireNonNull(owner, "owner");
        }
    }
}
