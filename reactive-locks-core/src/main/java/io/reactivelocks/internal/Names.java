package io.reactivelocks.internal;

import io.reactivelocks.spi.LockNames;

/** Checks lock names at call time (the rules live in {@link LockNames}). */
final class Names {

    private Names() {
    }

    static String check(String name) {
        return LockNames.check(name);
    }
}
