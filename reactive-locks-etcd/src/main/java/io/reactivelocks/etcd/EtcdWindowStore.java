package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Window claims on etcd. One key per name and period, {@code <prefix>-window/<base64url(name)>/<period
 * ms>}, holds the last claimed window index as 19 zero-padded digits (so etcd's byte-wise value
 * comparison is numeric). A claim is one transaction: <em>if</em> the stored index is lower than
 * this window's (or the key is absent) <em>then</em> put this window's index; so the first caller of
 * a window wins and a stored window never goes back. The token is the revision of that put: etcd
 * revisions are global and strictly increasing, across restarts.
 *
 * <p><b>Clock.</b> etcd has no clock a transaction can read, so the window index is computed from
 * this client's wall clock ({@code scheduler.now(MILLISECONDS)}, the system clock for Reactor's
 * schedulers). What the store guarantees does not depend on it: at most one claim per window index
 * and name, and never a claim of an index lower than one already claimed. What does: when a
 * window starts. Two clients whose clocks differ by δ may claim consecutive windows δ less than a
 * period apart; keep the fleet's clocks synchronized (NTP) to well under a period.
 *
 * <p>The key is put with a lease of the rest of the window plus one period, so it disappears two
 * windows after its last claim; a client whose clock lags by more than a period could then claim an
 * old index again (with a higher token). A claim costs a read (a loser usually stops there), a
 * lease grant and a transaction; a caller that loses the transaction revokes its lease.
 */
final class EtcdWindowStore implements WindowStore {

    private static final int ATTEMPTS = 3;

    private final Client client;
    private final boolean ownsClient;
    private final String prefix;
    private final Scheduler clock;

    /**
     * @param client     the jetcd client
     * @param ownsClient whether {@link #close()} closes it
     * @param prefix     the key prefix of the window keys (the lock prefix + {@code "-window"})
     * @param clock      whose {@code now(MILLISECONDS)} decides the window
     */
    EtcdWindowStore(Client client, boolean ownsClient, String prefix, Scheduler clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.prefix = EtcdKeys.checkPrefix(prefix);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    ByteSequence key(String name, Duration period) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/" + period.toMillis());
    }

    static ByteSequence index(long window) {
        return ByteSequence.from(String.format("%019d", window), StandardCharsets.US_ASCII);
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        return Mono.defer(() -> {
            long p = period.toMillis();
            long now = clock.now(TimeUnit.MILLISECONDS);
            long window = Math.floorDiv(now, p);
            Duration remaining = Duration.ofMillis((window + 1) * p - now);
            ByteSequence key = key(name, period);
            ByteSequence value = index(window);
            return Mono.fromFuture(() -> client.getKVClient().get(key, GetOption.builder().withSerializable(true).build()))
                    .flatMap(read -> {
                        KeyValue current = read.getKvs().isEmpty() ? null : read.getKvs().get(0);
                        if (claimedAlready(current, value)) {
                            return Mono.<WindowGrant>empty();
                        }
                        long ttl = Math.max(1, (remaining.toMillis() + p + 999) / 1000);
                        return Mono.fromFuture(() -> client.getLeaseClient().grant(ttl))
                                .flatMap(lease -> put(key, value, lease.getID(), current, 1)
                                        .map(token -> new WindowGrant(window, token, remaining))
                                        .switchIfEmpty(Mono.defer(() -> revoke(lease.getID()))));
                    })
                    .onErrorMap(e -> EtcdErrors.map(name, "window claim", e));
        });
    }

    private static boolean claimedAlready(@Nullable KeyValue current, ByteSequence value) {
        return current != null && compare(current.getValue(), value) >= 0;
    }

    private static int compare(ByteSequence a, ByteSequence b) {
        return a.toString(StandardCharsets.US_ASCII).compareTo(b.toString(StandardCharsets.US_ASCII));
    }

    /** The conditional put; empty when another caller claimed this window (or a later one) first. */
    private Mono<Long> put(ByteSequence key, ByteSequence value, long leaseId, @Nullable KeyValue seen, int attempt) {
        Cmp guard = seen == null
                ? new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0))
                : new Cmp(key, Cmp.Op.LESS, CmpTarget.value(value));
        return Mono.fromFuture(() -> client.getKVClient().txn()
                        .If(guard)
                        .Then(Op.put(key, value, PutOption.builder().withLeaseId(leaseId).build()))
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit())
                .flatMap(r -> {
                    if (r.isSucceeded()) {
                        return Mono.just(r.getHeader().getRevision());
                    }
                    KeyValue now = current(r);
                    if (claimedAlready(now, value) || attempt >= ATTEMPTS) {
                        return Mono.empty();
                    }
                    // the key appeared or vanished (its lease ran out) between the read and the transaction
                    return put(key, value, leaseId, now, attempt + 1);
                });
    }

    private static @Nullable KeyValue current(TxnResponse r) {
        if (r.getGetResponses().isEmpty() || r.getGetResponses().get(0).getKvs().isEmpty()) {
            return null;
        }
        return r.getGetResponses().get(0).getKvs().get(0);
    }

    private <T> Mono<T> revoke(long leaseId) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(leaseId))
                .onErrorResume(e -> Mono.empty()) // the lease expires by itself
                .then(Mono.empty());
    }

    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "EtcdWindowStore{" + prefix + "}";
    }
}
