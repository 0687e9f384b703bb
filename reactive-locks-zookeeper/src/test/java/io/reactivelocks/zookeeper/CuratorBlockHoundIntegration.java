package io.reactivelocks.zookeeper;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Curator's protection mode names each protected create with {@code UUID.randomUUID()}
 * ({@code ProtectedMode.resetProtectedId}, run when the create builder is made, on the caller's
 * thread). On Linux the JDK's default {@code SecureRandom} is NativePRNG, which reads
 * {@code /dev/urandom} through a {@code FileInputStream}; BlockHound reports the read.
 * {@code /dev/urandom} never blocks, and it is Curator's code, not ours: allow exactly that
 * method and nothing else (the same reasoning as the SCRAM nonce allowance of the R2DBC module).
 */
public final class CuratorBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("org.apache.curator.framework.imps.ProtectedMode", "resetProtectedId");
    }
}
