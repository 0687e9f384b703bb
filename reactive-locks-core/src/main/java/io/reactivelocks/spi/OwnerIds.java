package io.reactivelocks.spi;

import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * Random owner ids: 128 bits from a DRBG seeded once at class initialisation, so that drawing an
 * id never reads an entropy device on an event-loop thread; ids are sliced from blocks of 64 drawn
 * at once, so the generator runs once per 64 ids. The classes that hand out ids
 * ({@link GrantRequest#newOwner()}, which the engine calls for every owner id) initialise it
 * when they are first used, on the thread that creates the client or store. Not API.
 */
final class OwnerIds {

    private static final SecureRandom RANDOM = newRandom();
    private static final byte[] ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);
    private static final int ID_BYTES = 16;
    /** Ids drawn per call of the generator: one DRBG call per 64 ids, not per id. */
    private static final int BLOCK = 64 * ID_BYTES;

    // guarded by OwnerIds.class
    private static final byte[] block = new byte[BLOCK];
    private static int used = BLOCK;
    // guarded by OwnerIds.class: the encoded id before the String copies it
    private static final byte[] scratch = new byte[22];

    private OwnerIds() {
    }

    /** @return a new 128-bit random id, 22 URL-safe base64 characters (no padding) */
    public static String next() {
        synchronized (OwnerIds.class) {
            if (used == BLOCK) {
                RANDOM.nextBytes(block);
                used = 0;
            }
            encode(block, used, scratch);
            java.util.Arrays.fill(block, used, used + ID_BYTES, (byte) 0); // an id handed out is not kept
            used += ID_BYTES;
            // the String copies the characters: the scratch array is reused, only the String's own array is new
            String id = new String(scratch, StandardCharsets.US_ASCII);
            java.util.Arrays.fill(scratch, (byte) 0); // nor its encoding
            return id;
        }
    }

    /** Base64url without padding of 16 bytes at {@code from}: 5 groups of 3 bytes, then 1 byte. */
    static void encode(byte[] src, int from, byte[] out) {
        int o = 0;
        int i = from;
        for (int g = 0; g < 5; g++, i += 3) {
            int v = (src[i] & 0xff) << 16 | (src[i + 1] & 0xff) << 8 | (src[i + 2] & 0xff);
            out[o++] = ALPHABET[v >>> 18 & 0x3f];
            out[o++] = ALPHABET[v >>> 12 & 0x3f];
            out[o++] = ALPHABET[v >>> 6 & 0x3f];
            out[o++] = ALPHABET[v & 0x3f];
        }
        int last = src[i] & 0xff;
        out[o++] = ALPHABET[last >>> 2];
        out[o] = ALPHABET[(last & 0x3) << 4];
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
