package io.reactivelocks.redis;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Lettuce guards each write to a connection with a {@code ReentrantLock} held for a few
 * nanoseconds ({@code SharedLock.incrementWriters}); when two non-blocking threads write to one
 * connection at the same instant, the loser parks briefly, which BlockHound reports. That is
 * Lettuce's internal lock, not I/O and not ours: allow it, and nothing else.
 */
public final class LettuceBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters");
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "doExclusive");
    }
}
