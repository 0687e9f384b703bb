package io.reactivelocks.examples.webflux;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Jackson 3 builds each deserializer once per mapper, under a {@code ReentrantLock} in
 * {@code DeserializerCache._createAndCacheValueDeserializer} (a short in-memory critical section, no
 * I/O). When two event loops decode the first response of a type at the same moment — here the
 * test's {@code WebClient} decoding 32 concurrent {@code Reservation}s — one of them parks on that
 * lock for a moment, and BlockHound reports {@code Unsafe#park}. Allow exactly that method and nothing
 * else. (An application running BlockHound with Jackson 3 codecs needs the same allowance.)
 */
public final class JacksonBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("tools.jackson.databind.deser.DeserializerCache", "_createAndCacheValueDeserializer");
    }
}
