package io.reactivelocks.fencing;

import java.util.Objects;

/**
 * A value of a {@link FencedValues} resource and the fence it carries.
 *
 * @param value the value last written
 * @param fence the highest token accepted for the key: the token of the last accepted write
 */
public record FencedValue(String value, long fence) {

    /** Checks the fields. */
    public FencedValue {
        Objects.requireNonNull(value, "value");
    }
}
