package io.reactivelocks.spi.rwlock;

import io.reactivelocks.spi.Holder;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@link ReadWriteStore#holders}: who holds a read-write lock and which writers wait.
 *
 * @param readers        the unexpired readers, in token order
 * @param writer         the unexpired writer, or {@code null}
 * @param waitingWriters the waiting writers' unexpired intents: owner, token 0, remaining time of
 *                       the intent (or {@code null} when it lives as long as its session)
 */
public record ReadWriteHolders(List<Holder> readers, @Nullable Holder writer, List<Holder> waitingWriters) {

    /** Checks and copies the fields. */
    public ReadWriteHolders {
        readers = List.copyOf(Objects.requireNonNull(readers, "readers"));
        waitingWriters = List.copyOf(Objects.requireNonNull(waitingWriters, "waitingWriters"));
    }

    /** @return whether no grant and no intent is left */
    public boolean isEmpty() {
        return readers.isEmpty() && writer == null && waitingWriters.isEmpty();
    }
}
