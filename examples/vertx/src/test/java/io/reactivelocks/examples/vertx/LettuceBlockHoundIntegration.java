package io.reactivelocks.examples.vertx;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The one allowance this example's tests need, the same as reactive-locks-redis's tests: Lettuce
 * guards each write to a connection with a {@code ReentrantLock} held for a few nanoseconds
 * ({@code SharedLock.incrementWriters}); when two non-blocking threads write to one connection at
 * the same instant (here: a Vert.x event loop claiming a window while the lock client's scheduler
 * renews the leader lease), the loser parks briefly, which BlockHound reports. That is Lettuce's
 * internal lock, not I/O: allow it. Nothing in Vert.x needs an allowance.
 */
public final class LettuceBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters");
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "doExclusive");
    }
}
