package io.reactivelocks.internal;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Random owner ids: 128 bits from a DRBG seeded once at class initialisation, so that drawing an
 * id never reads an entropy device on an event-loop thread. The classes that hand out ids
 * ({@link DefaultLockClient}, {@link io.reactivelocks.spi.GrantRequest#newOwner()}) initialise it
 * when they are first used, on the thread that creates the client or store. Not API.
 */
public final class OwnerIds {

    private static final SecureRandom RANDOM = newRandom();
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

    private OwnerIds() {
    }

    /** @return a new 128-bit random id, 22 URL-safe base64 characters */
    public static String next() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return ENCODER.encodeToString(b);
    }

    private static SecureRandom newRandom() {
        SecureRandom r;
        try {
            r = SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            r = new SecureRandom();
        }
        r.nextBytes(new byte[16]); // seed now, not on the first event-loop call
        return r;
    }
}
