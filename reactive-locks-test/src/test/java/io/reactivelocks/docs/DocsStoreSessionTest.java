package io.reactivelocks.docs;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockStoreContract;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import reactor.core.publisher.Mono;

/** The store session of docs/writing-a-store.md passes the contract every store session passes. */
class DocsStoreSessionTest extends LockStoreContract {

    // tag::session[]
    /** A store's entry: one session hands out every concept the store offers over one connection set. */
    static final class MapStore extends AbstractLockStore {
        private final LocalLockStore locks;                          // stands for the store's connections
        private final ConcurrentMap<String, MapFencedValues.Slot> values;

        MapStore(LocalLockStore locks, ConcurrentMap<String, MapFencedValues.Slot> values) {
            super("map", EnumSet.of(Concept.LOCK, Concept.MULTI_LOCK, Concept.LEADER_ELECTION, Concept.FENCED_VALUES));
            this.locks = locks;
            this.values = values;
        }

        @Override
        protected LockBackend lockBackend(LockOptions options) {                        // each part works over the session's connections
            return leftOpen(new LocalLockBackend(locks));            // ... and leaves them open when it closes
        }

        @Override
        protected FencedValues fencedValuesPart() {
            return new MapFencedValues(values);
        }

        @Override
        protected Mono<Void> closeConnections() {                   // once, after every concept handed out is closed
            return Mono.empty();
        }
    }
    // end::session[]

    private final LocalLockStore server = new LocalLockStore();
    private final ConcurrentMap<String, MapFencedValues.Slot> values = new ConcurrentHashMap<>();

    @Override
    protected LockStore connect() {
        return new MapStore(server, values);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return EnumSet.of(Concept.LOCK, Concept.MULTI_LOCK, Concept.LEADER_ELECTION, Concept.FENCED_VALUES);
    }
}
