package io.reactivelocks.spring.boot;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * r2dbc-postgresql authenticates with SCRAM-SHA-256 on its event loop, and the SCRAM client
 * (com.ongres.scram) draws its nonce from a default {@code SecureRandom}: on Linux that is
 * NativePRNG, which reads {@code /dev/urandom} through a {@code FileInputStream}. BlockHound
 * reports the read; {@code /dev/urandom} never blocks, and it is the driver's code, not ours.
 * Allow exactly that method and nothing else.
 */
public final class ScramBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("com.ongres.scram.common.util.CryptoUtil", "nonce");
    }
}
