package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.HeldLock;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The {@link Lease} users see: an immutable view of one held grant (a lock's lease, a semaphore's
 * permit) at one deadline, reading the grant's live state from the engine object that holds it.
 * Not API.
 */
public final class LeaseSnapshot implements Lease {

    /** What a snapshot reads from the engine object that holds the grant. Not API. */
    public interface Source {
        /** @return the grant: name, owner, token */
        HeldLock heldLock();

        /** @return whether the grant is still held (not released, not lost) */
        boolean isActive();

        /** @return the grant's current deadline on {@link #clock()} */
        long validUntil();

        /** @return the clock of the deadlines */
        LockClock clock();

        /** @return the payload stored with the grant, or null */
        @Nullable String payload();

        /**
         * @param payload the new payload, or null to remove it
         * @return completes once the store has it
         */
        Mono<Void> updatePayload(@Nullable String payload);

        /** @return releases the grant */
        Mono<Void> release();

        /** @return releases the grant at the end of work: an unconfirmed release is reported, not an error */
        Mono<Void> releaseAfterWork();

        /** @return completes when the grant is lost */
        Mono<Void> lost();

        /** @return the first revocation request's reason; empty when the lease ends first or it cannot be revoked */
        default Mono<String> revoked() {
            return Mono.empty();
        }
    }

    private final Source source;
    private final long validUntil;

    /**
     * @param source     the engine object holding the grant
     * @param validUntil the deadline this snapshot shows
     */
    public LeaseSnapshot(Source source, long validUntil) {
        this.source = source;
        this.validUntil = validUntil;
    }

    @Override
    public String name() {
        return source.heldLock().name();
    }

    @Override
    public String owner() {
        return source.heldLock().owner();
    }

    @Override
    public long token() {
        return source.heldLock().token();
    }

    @Override
    public long validUntilNanos() {
        return validUntil;
    }

    @Override
    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, source.validUntil() - source.clock().nanoTime()));
    }

    @Override
    public boolean isValid() {
        return source.isActive() && source.clock().nanoTime() < source.validUntil();
    }

    @Override
    public @Nullable String payload() {
        return source.payload();
    }

    @Override
    public Mono<Void> updatePayload(@Nullable String payload) {
        return source.updatePayload(payload);
    }

    @Override
    public Mono<Void> release() {
        return source.release();
    }

    @Override
    public Mono<Void> releaseAfterWork() {
        return source.releaseAfterWork();
    }

    @Override
    public Mono<Void> lost() {
        return source.lost();
    }

    @Override
    public String toString() {
        return "Lease{name=" + name() + ", token=" + token() + ", owner=" + owner() + ", validUntilNanos=" + validUntil + "}";
    }

    @Override
    public Mono<String> revoked() {
        return source.revoked();
    }
}
