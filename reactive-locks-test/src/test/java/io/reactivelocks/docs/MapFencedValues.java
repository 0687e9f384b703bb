package io.reactivelocks.docs;

import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.Fencing;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import reactor.core.publisher.Mono;

// tag::store[]
/** Fenced values in a map that its clients share as they would share a server: one atomic step per call. */
final class MapFencedValues implements FencedValues {

    /** What the "server" keeps per key: the value (null once deleted) and the highest token accepted. */
    record Slot(String value, long fence) {
    }

    private final ConcurrentMap<String, Slot> server;

    MapFencedValues(ConcurrentMap<String, Slot> server) {
        this.server = server;
    }

    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");                                  // bad arguments fail at call time
        Objects.requireNonNull(value, "value");
        return Mono.fromSupplier(() -> put(key, token, value));       // nothing is sent before subscribe
    }

    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.fromSupplier(() -> {
            Slot s = server.get(key);
            return s == null || s.value() == null ? null : new FencedValue(s.value(), s.fence());   // null: empty
        });
    }

    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return Mono.fromSupplier(() -> put(key, token, null));        // fenced too, and the fence stays
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();                                          // it opened nothing of its own
    }

    private boolean put(String key, long token, String value) {
        boolean[] accepted = {false};
        server.compute(key, (k, s) -> {                               // one atomic step: one script or statement on a server
            if (s != null && !Fencing.admits(s.fence(), token)) {
                return s;                                             // a lower token: refused, nothing changes
            }
            accepted[0] = true;
            return new Slot(value, token);
        });
        return accepted[0];
    }
}
// end::store[]
