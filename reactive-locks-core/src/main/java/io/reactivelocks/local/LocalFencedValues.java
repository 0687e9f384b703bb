package io.reactivelocks.local;

import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.Fencing;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Fenced values in memory (one JVM; tests and local development), on {@link Fencing#admits}.
 * Each operation is one short critical section.
 */
public final class LocalFencedValues implements FencedValues {

    private record Slot(@Nullable String value, long fence) {
    }

    private final Map<String, Slot> slots = new HashMap<>(); // guarded by this

    /** An empty resource. */
    public LocalFencedValues() {
    }

    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return Mono.fromSupplier(() -> put(key, token, value));
    }

    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Slot s = slots.get(key);
                return s == null || s.value() == null ? null : new FencedValue(s.value(), s.fence());
            }
        });
    }

    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return Mono.fromSupplier(() -> put(key, token, null));
    }

    private synchronized boolean put(String key, long token, @Nullable String value) {
        Slot s = slots.get(key);
        if (s != null && !Fencing.admits(s.fence(), token)) {
            return false;
        }
        slots.put(key, new Slot(value, token));
        return true;
    }

    /** @return an empty {@code Mono}: there is nothing to close */
    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "LocalFencedValues";
    }
}
