package io.reactivelocks.internal.multi;

import io.reactivelocks.Lease;
import io.reactivelocks.multi.MultiLease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A set of leases held together. An <em>owning</em> set (from {@code acquire}) watches its leases
 * and releases the rest as soon as one is lost; a <em>scoped</em> set (the view handed to a
 * {@code withLocks} body) leaves that to the enclosing scopes.
 */
final class DefaultMultiLease implements MultiLease {

    private static final Logger LOG = Loggers.getLogger(DefaultMultiLease.class);

    private final List<String> names;
    private final List<Lease> leases;
    private final Map<String, Lease> byName;
    private final Sinks.Empty<Void> lostSink = Sinks.empty();
    private final AtomicBoolean released = new AtomicBoolean();
    private final Mono<Void> anyLost;
    private final boolean owning;
    private volatile Disposable watch;

    private DefaultMultiLease(List<Lease> leases, boolean owning) {
        this.owning = owning;
        this.leases = List.copyOf(leases);
        List<String> n = new ArrayList<>(leases.size());
        Map<String, Lease> m = new HashMap<>();
        for (Lease l : leases) {
            n.add(l.name());
            m.put(l.name(), l);
        }
        this.names = List.copyOf(n);
        this.byName = Map.copyOf(m);
        this.anyLost = Mono.firstWithSignal(this.leases.stream().map(Lease::lost).toList());
    }

    /** @return a set that releases the rest of its leases when one is lost */
    static DefaultMultiLease owning(List<Lease> leases) {
        DefaultMultiLease m = new DefaultMultiLease(leases, true);
        m.watch = m.anyLost.subscribe(null, e -> m.onLost(), m::onLost);
        if (m.released.get()) {
            m.watch.dispose();
        }
        return m;
    }

    /** @return a view of leases whose release and loss the enclosing scopes handle */
    static DefaultMultiLease scoped(List<Lease> leases) {
        return new DefaultMultiLease(leases, false);
    }

    private void onLost() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        lostSink.tryEmitEmpty();
        for (Lease l : leases) {
            l.release().subscribe(null, e -> LOG.warn("could not release lock '{}' after another lock of its set was lost"
                    + " (it expires by its TTL): {}", l.name(), e.toString()));
        }
    }

    @Override
    public List<String> names() {
        return names;
    }

    @Override
    public List<Lease> leases() {
        return leases;
    }

    @Override
    public Lease lease(String name) {
        Lease l = byName.get(name);
        if (l == null) {
            throw new IllegalArgumentException("name '" + name + "' is not one of this set's names " + names);
        }
        return l;
    }

    @Override
    public boolean isValid() {
        for (Lease l : leases) {
            if (!l.isValid()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public Duration remaining() {
        Duration min = null;
        for (Lease l : leases) {
            Duration r = l.remaining();
            if (min == null || r.compareTo(min) < 0) {
                min = r;
            }
        }
        return min == null ? Duration.ZERO : min;
    }

    /** Stops watching for losses: the set is being released. */
    void disarm() {
        released.set(true);
        Disposable w = watch;
        if (w != null) {
            w.dispose();
        }
    }

    @Override
    public Mono<Void> release() {
        return Mono.defer(() -> {
            disarm();
            return Mono.whenDelayError(leases.stream().map(Lease::release).toList());
        });
    }

    @Override
    public Mono<Void> lost() {
        return owning ? lostSink.asMono() : anyLost;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("MultiLease{");
        for (int i = 0; i < leases.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(leases.get(i).name()).append('=').append(leases.get(i).token());
        }
        return b.append('}').toString();
    }
}
