package io.reactivelocks.shedlock;

import io.reactivelocks.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One lease taken for ShedLock: its {@code lockAtMostFor} timer, the delayed release after an
 * early unlock, and the one release that ends it. Every {@link ShedLockHandle} of the grant
 * (the first and each extension) shares it. State changes are short and under the monitor; the
 * release itself runs outside it.
 */
final class ShedLockGrant {

    private static final Logger LOG = Loggers.getLogger(ShedLockGrant.class);

    private final Lease lease;
    private final Scheduler timers;
    private final Duration blockBound;
    private final Mono<Void> release;

    /** Bumped by every reschedule, so that a timer set before it does nothing. Guarded by {@code this}. */
    private long generation;
    /** Guarded by {@code this}. */
    private @Nullable Disposable timer;
    /** The current lockAtMostFor deadline on ShedLock's clock. Guarded by {@code this}. */
    private Instant atMostUntil = Instant.MAX;
    /** Set once the release was started: the grant is over. Guarded by {@code this}. */
    private boolean closing;

    ShedLockGrant(Lease lease, Scheduler timers, Duration blockBound, Consumer<ShedLockGrant> onEnd) {
        this.lease = lease;
        this.timers = timers;
        this.blockBound = blockBound;
        this.release = Mono.defer(lease::release)
                .onErrorResume(e -> {
                    // the lease's renewal has stopped; the store drops the lock by its TTL
                    LOG.warn("Release of ShedLock lock '{}' failed; it ends by its lease TTL: {}", lease.name(), e.toString());
                    return Mono.empty();
                })
                .then(Mono.<Void>fromRunnable(() -> onEnd.accept(this)))
                .cache();
    }

    Lease lease() {
        return lease;
    }

    /** @return true once the grant was released (or started to be), given up, or its lease lost */
    boolean isEnded() {
        synchronized (this) {
            if (closing) {
                return true;
            }
        }
        return !lease.isValid();
    }

    /** Gives the lock up at {@code until} (ShedLock's lockAtMostFor), replacing any earlier deadline. */
    void scheduleLockAtMostUntil(Instant until) {
        synchronized (this) {
            if (closing) {
                return;
            }
            atMostUntil = until;
            scheduleReleaseAt(until);
        }
    }

    /**
     * ShedLock's unlock: releases now (blocking until the store answered) or, when
     * {@code atLeastUntil} is still ahead, at that instant (returning at once).
     */
    void unlock(Instant atLeastUntil) {
        synchronized (this) {
            if (closing) {
                return;
            }
            if (ReactiveLocksLockProvider.now().isBefore(atLeastUntil)) {
                // lockAtLeastFor ≤ lockAtMostFor, so this never keeps the lock past lockAtMostFor
                scheduleReleaseAt(atLeastUntil);
                return;
            }
            closeLocked();
        }
        release.block(blockBound);
    }

    /**
     * ShedLock's extend: moves the lockAtMostFor deadline to {@code newAtMostUntil}.
     *
     * @return false (after the release finished) when the grant had already ended
     */
    boolean extend(Instant newAtMostUntil) {
        synchronized (this) {
            boolean over = closing || !lease.isValid() || !ReactiveLocksLockProvider.now().isBefore(atMostUntil);
            if (!over) {
                atMostUntil = newAtMostUntil;
                scheduleReleaseAt(newAtMostUntil);
                return true;
            }
            closeLocked();
        }
        release.block(blockBound);
        return false;
    }

    private void scheduleReleaseAt(Instant at) {
        long gen = ++generation;
        if (timer != null) {
            timer.dispose();
        }
        Duration delay = Duration.between(ReactiveLocksLockProvider.now(), at);
        timer = Mono.delay(delay.isNegative() ? Duration.ZERO : delay, timers)
                .subscribe(tick -> deadlinePassed(gen));
    }

    private void deadlinePassed(long gen) {
        synchronized (this) {
            if (gen != generation || closing) {
                return;
            }
            closeLocked();
        }
        release.subscribe();
    }

    private void closeLocked() {
        closing = true;
        generation++;
        if (timer != null) {
            timer.dispose();
            timer = null;
        }
    }
}
