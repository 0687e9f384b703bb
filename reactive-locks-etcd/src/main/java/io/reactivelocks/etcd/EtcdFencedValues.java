package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.Fencing;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Fenced values on etcd, over the application's jetcd {@link Client}.
 *
 * <p><b>Layout.</b> One key per fenced key, {@code <prefix>-fenced/<base64url(utf8(key))>} (the
 * name encoding of the lock keys, so any key is exactly one segment and cannot reach another's),
 * with no lease: it is application data. Its value holds the fence and the value together: the
 * fence in decimal ASCII, then {@code '\n'} and the value's UTF-8 bytes; a deleted value leaves the
 * fence alone (no newline), a tombstone that keeps refusing older tokens. The keys sit beside the
 * lock keys ({@code <prefix>/…}), not under them, so a fenced write wakes no lock watcher.
 *
 * <p><b>Compare-and-set.</b> A write or delete reads the key (linearizable), applies
 * {@link Fencing#admits} to its fence — a refused token returns {@code false} and writes nothing —
 * then commits one transaction: <em>if</em> the key's mod revision is still the one read (or,
 * for a key never written, its create revision is 0) <em>then</em> put the new fence and value,
 * <em>else</em> get the key. When a concurrent writer came first, the decision is taken again on
 * what that else branch returned, without another read, until the transaction commits or the
 * token is refused; every round that fails means another writer's round succeeded. The whole
 * operation, rounds included, is bounded by {@link EtcdLockOptions#requestTimeout()}.
 *
 * <p>Every method is lazy: nothing is sent before subscribe, and each subscription sends its own
 * requests. Cancelling cancels the request in flight on the client side (one already received by
 * etcd may still commit). Failures, the timeout included, are signalled as
 * {@link io.reactivelocks.LockBackendException} naming the key. Nothing blocks: jetcd's futures
 * are adapted with {@link Mono#fromFuture(java.util.function.Supplier)}.
 */
public final class EtcdFencedValues implements FencedValues {

    private static final byte NEWLINE = '\n';

    private final KV kv;
    private final String prefix;
    private final Duration requestTimeout;
    private final Scheduler timer;

    private EtcdFencedValues(Client client, String prefix, Duration requestTimeout, Scheduler timer) {
        this.kv = Objects.requireNonNull(client, "client").getKVClient();
        this.prefix = EtcdKeys.checkPrefix(prefix);
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        this.timer = Objects.requireNonNull(timer, "timer");
    }

    /**
     * Fenced values under {@code <options.prefix()>-fenced/}, each operation bounded by
     * {@code options.requestTimeout()} (timed on {@code options.scheduler()}). Returns at once:
     * nothing is sent before the first operation is subscribed. The client stays the
     * application's: {@link #close()} leaves it open.
     *
     * @param client  the application's jetcd client (not closed)
     * @param options the key prefix, the request timeout and the scheduler of that timeout
     * @return fenced values on etcd
     * @throws NullPointerException when an argument is null
     */
    public static EtcdFencedValues create(Client client, EtcdLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        ChannelReconnect.follow(client, options.reconnectInterval(), options.scheduler());
        return new EtcdFencedValues(client, options.prefix() + "-fenced", options.requestTimeout(), options.scheduler());
    }

    /**
     * {@inheritDoc}
     *
     * <p>One read and one transaction on etcd (another transaction per concurrent writer that came
     * first); a refused token costs the read only.
     */
    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return compareAndSet(key, token, value, "fenced write");
    }

    /**
     * {@inheritDoc}
     *
     * <p>An admitted delete puts the fence alone (a tombstone, also for a key never written), so a
     * later write with an older token is refused; costs as {@link #write}.
     */
    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return compareAndSet(key, token, null, "fenced delete");
    }

    /**
     * {@inheritDoc}
     *
     * <p>One linearizable read; empty as well after a delete (the fence stays on the store).
     */
    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.defer(() -> {
                    ByteSequence k = key(key);
                    return Mono.fromFuture(() -> kv.get(k, GetOption.DEFAULT));
                })
                .timeout(requestTimeout, timer)
                .flatMap(r -> {
                    Stored s = Stored.of(r.getKvs());
                    return s == null || s.value() == null ? Mono.<FencedValue>empty()
                            : Mono.just(new FencedValue(s.value(), s.fence()));
                })
                .onErrorMap(e -> EtcdErrors.map(key, "fenced read", e));
    }

    /**
     * Does nothing and completes: this class opens nothing of its own, and the {@link Client} it was
     * given stays open for the application (and for further use of this object). Idempotent.
     *
     * @return an empty {@code Mono}
     */
    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    /** @return {@code <prefix>-fenced/<base64url(key)>}: the etcd key of a fenced key */
    ByteSequence key(String key) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(key));
    }

    private Mono<Boolean> compareAndSet(String key, long token, @Nullable String value, String operation) {
        return Mono.defer(() -> {
                    ByteSequence k = key(key);
                    ByteSequence stored = encode(token, value);
                    return Mono.fromFuture(() -> kv.get(k, GetOption.DEFAULT))
                            .flatMap(r -> round(k, token, stored, r.getKvs()));
                })
                .timeout(requestTimeout, timer)
                .onErrorMap(e -> EtcdErrors.map(key, operation, e));
    }

    /** One round of the compare-and-set, on the key as last seen ({@code seen}: empty when absent). */
    private Mono<Boolean> round(ByteSequence k, long token, ByteSequence stored, List<KeyValue> seen) {
        Stored current = Stored.of(seen);
        if (current != null && !Fencing.admits(current.fence(), token)) {
            return Mono.just(false);
        }
        Cmp unchanged = current == null
                ? new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0))
                : new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(seen.get(0).getModRevision()));
        return Mono.fromFuture(() -> kv.txn()
                        .If(unchanged)
                        .Then(Op.put(k, stored, PutOption.DEFAULT))
                        .Else(Op.get(k, GetOption.DEFAULT))
                        .commit())
                .flatMap(r -> r.isSucceeded() ? Mono.just(true) : round(k, token, stored, elseKvs(r)));
    }

    private static List<KeyValue> elseKvs(TxnResponse r) {
        return r.getGetResponses().isEmpty() ? List.of() : r.getGetResponses().get(0).getKvs();
    }

    /**
     * @param fence the fence
     * @param value the value, or {@code null} for a tombstone
     * @return the stored bytes: {@code <fence>\n<utf8(value)>}, or {@code <fence>} alone
     */
    static ByteSequence encode(long fence, @Nullable String value) {
        byte[] head = Long.toString(fence).getBytes(StandardCharsets.US_ASCII);
        if (value == null) {
            return ByteSequence.from(head);
        }
        byte[] body = value.getBytes(StandardCharsets.UTF_8);
        byte[] out = Arrays.copyOf(head, head.length + 1 + body.length);
        out[head.length] = NEWLINE;
        System.arraycopy(body, 0, out, head.length + 1, body.length);
        return ByteSequence.from(out);
    }

    /**
     * A decoded key: its fence and its value ({@code null} after a delete).
     *
     * @param fence the fence
     * @param value the value, or {@code null} for a tombstone
     */
    record Stored(long fence, @Nullable String value) {

        /**
         * @param kvs the key as read: empty when absent
         * @return it decoded, or {@code null} when absent
         * @throws IllegalStateException when the key holds something else than a fenced value
         */
        static @Nullable Stored of(List<KeyValue> kvs) {
            return kvs.isEmpty() ? null : decode(kvs.get(0).getValue().getBytes());
        }

        static Stored decode(byte[] b) {
            int nl = 0;
            while (nl < b.length && b[nl] != NEWLINE) {
                nl++;
            }
            String head = new String(b, 0, nl, StandardCharsets.US_ASCII);
            long fence;
            try {
                fence = Long.parseLong(head);
            } catch (NumberFormatException e) {
                throw new IllegalStateException("not a fenced value: the key's value does not start with a decimal fence", e);
            }
            return new Stored(fence, nl == b.length ? null : new String(b, nl + 1, b.length - nl - 1, StandardCharsets.UTF_8));
        }
    }

    @Override
    public String toString() {
        return "EtcdFencedValues{" + prefix + "}";
    }
}
