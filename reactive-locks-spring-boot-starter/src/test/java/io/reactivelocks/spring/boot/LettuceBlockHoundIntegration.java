package io.reactivelocks.spring.boot;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Lettuce guards each write to a connection with a {@code ReentrantLock} held for a few
 * nanoseconds ({@code SharedLock.incrementWriters}); when two non-blocking threads write to one
 * connection at the same instant, the loser parks briefly, which BlockHound reports. That is
 * Lettuce's internal lock, not I/O and not ours: allow it.
 *
 * <p>Also allowed: the one-time initialisation of {@code java.util.logging}'s root handlers. With
 * no SLF4J binding, Netty and Lettuce log through JUL; when two event loops log their first
 * message at the same instant (a connection cut resets a client's command and pub/sub connections
 * together), JUL's initialisation lock parks the loser. BlockHound would then throw inside the
 * event loop and kill it, and the test would hang in {@code RedisClient.shutdown}.
 *
 * <p>And, for TLS: Lettuce builds a new JDK {@code SSLContext} for every connect, on the event
 * loop, whose {@code init} draws a few bytes from {@code /dev/urandom} through
 * {@code NativePRNG} — a read that never waits. (What must not happen there, reading PEM files or
 * the JDK trust store per connect, is avoided by giving Lettuce a ready {@code TrustManagerFactory}.)
 */
public final class LettuceBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters");
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "doExclusive");
        builder.allowBlockingCallsInside("java.util.logging.LogManager", "initializeGlobalHandlers");
        builder.allowBlockingCallsInside("sun.security.provider.NativePRNG$RandomIO", "implNextBytes");
    }
}
