package io.reactivelocks.docs;

import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

// tag::contract[]
/** The store of docs/writing-a-store.md passes the contract every FencedValues store passes. */
class DocsWritingAStoreTest extends FencedWritesContract {

    private final ConcurrentMap<String, MapFencedValues.Slot> server = new ConcurrentHashMap<>();

    @Override
    protected FencedValues newValues() {
        return new MapFencedValues(server);                           // each call: a new client of the same store
    }
}
// end::contract[]
