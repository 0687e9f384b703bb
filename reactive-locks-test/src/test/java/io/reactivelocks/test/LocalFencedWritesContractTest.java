package io.reactivelocks.test;

import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.local.LocalFencedValues;

/** The fenced-writes contract in memory: one resource shared by every writer, like a server. */
class LocalFencedWritesContractTest extends FencedWritesContract {

    private final LocalFencedValues values = new LocalFencedValues();

    @Override
    protected FencedValues newValues() {
        return values;
    }
}
