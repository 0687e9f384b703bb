package io.reactivelocks.internal;

/**
 * Random owner ids; see {@link io.reactivelocks.spi.OwnerIds}.
 *
 * @deprecated use {@link io.reactivelocks.spi.OwnerIds}; this engine-internal alias goes away
 */
@Deprecated
public final class OwnerIds {

    private OwnerIds() {
    }

    /** @return a new 128-bit random id, 22 URL-safe base64 characters */
    public static String next() {
        return io.reactivelocks.spi.OwnerIds.next();
    }
}
