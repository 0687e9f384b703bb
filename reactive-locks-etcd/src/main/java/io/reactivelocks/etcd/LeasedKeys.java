package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.ToLongFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Keys on leases of their own, one per owner and name, {@code <prefix>/<base64url(name)>/<owner>}:
 * the layout of the semaphore's permits and of the read-write lock's requests. What both stores do
 * the same way on it lives here — the key of an owner, renewal and release found by a read, the
 * wait for a deletion, the name's change stream and its revocation requests; each store says how a
 * key's token is read. Every method is lazy and never blocks; errors are the client's (the stores
 * map them).
 *
 * <p>The key {@code <prefix>/<base64url(name)>} — the name's segment with no owner after it — is the
 * name's revocation key ({@link #revocation}), as the lock's ({@link EtcdRevocations}): it lies outside
 * the range {@code <prefix>/<base64url(name)>/} that every read of the grants (grant decisions,
 * counts, holders, renewal and release by a read, the waits and the change stream's range watch)
 * covers, and the admin's listing of names skips a key with no owner segment.
 */
final class LeasedKeys {

    private final Client client;
    private final String prefix;

    /**
     * @param client the jetcd client (not closed here)
     * @param prefix the key prefix of the concept (the lock prefix + {@code "-semaphore"} or {@code "-rw"})
     */
    LeasedKeys(Client client, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = EtcdKeys.checkPrefix(prefix);
    }

    String prefix() {
        return prefix;
    }

    /** @return {@code <prefix>/<base64url(name)>/}: the range of one name's keys */
    ByteSequence range(String name) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/");
    }

    /** @return {@code <prefix>/<base64url(name)>/<owner>}: one owner's key */
    ByteSequence key(String name, String owner) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name) + "/" + owner);
    }

    /**
     * @return {@code <prefix>/<base64url(name)>}: the key of the name's revocation requests, outside
     *         {@link #range} (no read of the grants sees it)
     */
    ByteSequence revocation(String name) {
        return EtcdKeys.bytes(prefix + "/" + EtcdKeys.encode(name));
    }

    /**
     * A revocation request to the grant of {@code owner}: a put of the name's revocation key on a
     * short lease revoked right after ({@link EtcdRevocations#request}), seen by the revocation watch of
     * every {@link #events} stream of the name; nothing is left.
     *
     * @param name   the name
     * @param owner  the grant asked
     * @param reason why
     * @return completes once the request was put
     * @throws NullPointerException when {@code owner} or {@code reason} is null
     */
    Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> EtcdRevocations.request(client, revocation(name), owner, reason));
    }

    /** @return the owner of a key of {@code name} */
    String ownerOf(String name, ByteSequence key) {
        return key.toString(StandardCharsets.UTF_8).substring(range(name).toString(StandardCharsets.UTF_8).length());
    }

    /** @return a {@code keepAliveOnce} of the lease: the TTL left, {@code <= 0} when it is gone */
    Mono<Long> keepAlive(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().keepAliveOnce(lease)).map(r -> r.getTTL());
    }

    /** @return revokes the lease (which deletes its keys), errors ignored: an unrevoked lease runs out by its TTL */
    Mono<Void> revoke(long lease) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(lease)).onErrorResume(e -> Mono.empty()).then();
    }

    /**
     * Renewal found by a read: the owner's key, when its token is the grant's, has its lease kept alive.
     *
     * @param r     the renewal
     * @param token how a key's token is read
     * @return renewed for at most the TTL etcd still gives the lease, or not held
     */
    Mono<RenewOutcome> renew(RenewRequest r, ToLongFunction<KeyValue> token) {
        return Mono.fromFuture(() -> client.getKVClient().get(key(r.lock().name(), r.lock().owner())))
                .flatMap(got -> {
                    if (got.getKvs().isEmpty() || token.applyAsLong(got.getKvs().get(0)) != r.lock().token()) {
                        return Mono.just(RenewOutcome.notHeld());
                    }
                    return keepAlive(got.getKvs().get(0).getLease()).map(ttl -> renewed(r, ttl));
                })
                .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(RenewOutcome.notHeld()));
    }

    /**
     * @param r   the renewal
     * @param ttl the TTL etcd gave the lease
     * @return renewed for at most that TTL, or not held when the lease is gone
     */
    static RenewOutcome renewed(RenewRequest r, long ttl) {
        if (ttl <= 0) {
            return RenewOutcome.notHeld();
        }
        Duration left = Duration.ofSeconds(ttl);
        return RenewOutcome.renewed(r.leaseTime().compareTo(left) <= 0 ? r.leaseTime() : left);
    }

    /**
     * Release found by a read: revokes the lease of the owner's key (which deletes it), or deletes
     * a key without a lease.
     *
     * @return whether a key of the owner was there
     */
    Mono<Boolean> release(String name, String owner) {
        return Mono.fromFuture(() -> client.getKVClient().get(key(name, owner))).flatMap(r -> {
            if (r.getKvs().isEmpty()) {
                return Mono.just(false);
            }
            KeyValue kv = r.getKvs().get(0);
            return (kv.getLease() == 0
                    ? Mono.fromFuture(() -> client.getKVClient().delete(kv.getKey(), DeleteOption.DEFAULT)).then()
                    : Mono.fromFuture(() -> client.getLeaseClient().revoke(kv.getLease()))
                            .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.empty()).then())
                    .thenReturn(true);
        });
    }

    /**
     * @param keys     the keys (or key prefixes) to watch
     * @param prefix   whether each is a prefix
     * @param puts     whether a put wakes too (else deletions only)
     * @param revision the revision to watch from (a change since then is delivered too)
     * @return completes on the first deletion (or put), or when a watch ends or fails (compacted, lost:
     *         ask again); cancel closes the watches
     */
    Mono<Void> deletion(List<ByteSequence> keys, boolean prefix, boolean puts, long revision) {
        return Mono.create(sink -> {
            List<Watch.Watcher> watchers = new ArrayList<>(keys.size());
            WatchOption option = WatchOption.builder().isPrefix(prefix).withRevision(revision).withNoPut(!puts).build();
            sink.onDispose(() -> {
                synchronized (watchers) {
                    watchers.forEach(Watch.Watcher::close);
                    watchers.clear();
                }
            });
            for (ByteSequence k : keys) {
                Watch.Watcher w = client.getWatchClient().watch(k, option, Watch.listener(
                        response -> {
                            if (!response.getEvents().isEmpty()) {
                                sink.success();
                            }
                        },
                        error -> sink.success(),
                        sink::success));
                synchronized (watchers) {
                    watchers.add(w);
                }
            }
        });
    }

    /**
     * The name's change stream: {@code Subscribed} once both its watches are live (the range's and the
     * revocation key's; again when jetcd re-created either), then an {@code Acquired} for each put of
     * a key in the range (a key joined, holding or waiting), a {@code Released} for each deletion, and
     * a {@code Revoked} for each revocation request ({@link #revoke}) put while the stream watches.
     *
     * @param name  the name
     * @param token how a key's token is read
     * @return the hot stream; errors on a watch failure that is not transient
     */
    Flux<LockEvent> events(String name, ToLongFunction<KeyValue> token) {
        return Flux.create(sink -> {
            boolean[] live = new boolean[2]; // guarded by itself: range, revocations
            Watch.Watcher revocations = EtcdRevocations.watch(client.getWatchClient(), name, revocation(name), sink, () -> {
                if (EtcdRevocations.created(live, 1)) {
                    sink.next(new LockEvent.Subscribed(name));
                }
            });
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).build();
            Watch.Watcher w = client.getWatchClient().watch(range(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            if (EtcdRevocations.created(live, 0)) {
                                sink.next(new LockEvent.Subscribed(name));
                            }
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                sink.next(new LockEvent.Released(name, ownerOf(name, kv.getKey()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT) {
                                sink.next(new LockEvent.Acquired(name, ownerOf(name, kv.getKey()), token.applyAsLong(kv)));
                            }
                        }
                    },
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(() -> {
                w.close();
                revocations.close();
            });
        });
    }
}
