package io.reactivelocks.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The {@link SimpleLock} ShedLock holds: usable once — {@link #unlock()} or
 * {@link #extend(Duration, Duration)} — after which it throws {@link IllegalStateException}, as
 * ShedLock's own locks do; an extension hands out a new handle on the same grant.
 */
final class ShedLockHandle implements SimpleLock {

    private final ShedLockGrant grant;
    private final Instant atLeastUntil;
    private final AtomicBoolean active = new AtomicBoolean(true);

    ShedLockHandle(ShedLockGrant grant, Instant atLeastUntil) {
        this.grant = grant;
        this.atLeastUntil = atLeastUntil;
    }

    @Override
    public void unlock() {
        ReactiveLocksLockProvider.checkBlockingAllowed();
        take("unlocked");
        ReactiveLocksLockProvider.leaveCurrentThread(grant);
        grant.unlock(atLeastUntil);
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
        Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
        if (lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
            throw new IllegalArgumentException("lockAtLeastFor (" + lockAtLeastFor + ") is longer than lockAtMostFor ("
                    + lockAtMostFor + ")");
        }
        ReactiveLocksLockProvider.checkBlockingAllowed();
        take("extended");
        Instant now = ReactiveLocksLockProvider.now();
        if (!grant.extend(now.plus(lockAtMostFor))) {
            ReactiveLocksLockProvider.leaveCurrentThread(grant);
            return Optional.empty();
        }
        return Optional.of(new ShedLockHandle(grant, now.plus(lockAtLeastFor)));
    }

    private void take(String what) {
        if (!active.compareAndSet(true, false)) {
            throw new IllegalStateException("The lock '" + grant.lease().name() + "' was already unlocked or extended; "
                    + "it cannot be " + what + " again");
        }
    }

    @Override
    public String toString() {
        return "ShedLockHandle{" + grant.lease().name() + ", token=" + grant.lease().token() + "}";
    }
}
