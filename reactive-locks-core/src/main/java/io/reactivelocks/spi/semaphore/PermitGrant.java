package io.reactivelocks.spi.semaphore;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The answer of {@link SemaphoreStore#tryGrant}: {@link Granted} or {@link Busy}. */
public sealed interface PermitGrant permits PermitGrant.Granted, PermitGrant.Busy {

    /**
     * Every asked permit was granted.
     *
     * @param tokens one fencing token per owner, in the order of the request's owners; each greater
     *               than every token granted before for the name
     * @param ttl    the TTL the store granted, counted from when it received the request
     */
    record Granted(List<Long> tokens, Duration ttl) implements PermitGrant {
        /** Checks and copies the fields. */
        public Granted {
            tokens = List.copyOf(Objects.requireNonNull(tokens, "tokens"));
            Objects.requireNonNull(ttl, "ttl");
        }
    }

    /**
     * Not enough permits are free; nothing was granted.
     *
     * @param earliestExpiry the time left of the holder that expires first, when the store told;
     *                       {@code null} when unknown
     */
    record Busy(@Nullable Duration earliestExpiry) implements PermitGrant {
    }
}
