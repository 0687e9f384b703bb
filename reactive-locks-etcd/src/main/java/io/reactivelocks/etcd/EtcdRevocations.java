package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.spi.LockEvent;
import java.util.Objects;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * Revocation requests on etcd, the same for the lock ({@link EtcdLockBackend}) and the grants
 * (semaphore permits, readers and writers: {@link LeasedKeys}): a put of the name's revocation key
 * — {@code <prefix>/<base64url(name)>}, the name's segment with no owner after it, outside the
 * range {@code <prefix>/<base64url(name)>/} of the name's owner keys — valued
 * {@code <length of owner>:<owner><reason>} ({@link EtcdKeys#revocationValue}), on a lease of its
 * own that is revoked right after the put, and a watch of that one key (puts only) beside the
 * name's range in each events stream. Every method is lazy and never blocks.
 */
final class EtcdRevocations {

    /** How long a revocation request's key outlives its put at most, when the revoke of its lease fails (etcd's TTL minimum is about 2 s). */
    static final long TTL_SECONDS = 5;

    private EtcdRevocations() {
    }

    /**
     * One request: grants a lease of {@value #TTL_SECONDS} s, puts the key on it, then revokes the
     * lease (which deletes the key; should the revoke not get through, the lease ends by itself).
     * Concurrent requests for one name each put the key on their own lease, and each watch sees
     * every put.
     *
     * @param client the jetcd client
     * @param key    the name's revocation key
     * @param owner  the holder asked
     * @param reason why
     * @return completes once the key was put and its lease revoked (or left to its TTL); errors are
     *         the client's (the caller maps them)
     */
    static Mono<Void> request(Client client, ByteSequence key, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        ByteSequence value = EtcdKeys.revocationValue(owner, reason);
        return Mono.fromFuture(() -> client.getLeaseClient().grant(TTL_SECONDS))
                .flatMap(l -> Mono.fromFuture(() -> client.getKVClient().put(key, value, PutOption.builder().withLeaseId(l.getID()).build()))
                        .then(endLease(client, l.getID()))
                        .onErrorResume(e -> endLease(client, l.getID()).then(Mono.error(e))));
    }

    /** Revokes a revocation request's lease (deleting its key); a failure is left to the lease's TTL. */
    private static Mono<Void> endLease(Client client, long leaseId) {
        return Mono.fromFuture(() -> client.getLeaseClient().revoke(leaseId)).then().onErrorResume(e -> Mono.empty());
    }

    /**
     * Watches the name's revocation key for puts and reports each as {@link LockEvent.Revoked}
     * (a value that is not a request is skipped). Transient watch errors are left to jetcd, which
     * re-creates the watch; a permanent one ends the stream.
     *
     * @param watch   the watch client
     * @param name    the name the events carry
     * @param key     the name's revocation key
     * @param sink    the events stream
     * @param created run each time etcd confirms the watch (again after a re-creation)
     * @return the watcher (closed with the stream)
     */
    static Watch.Watcher watch(Watch watch, String name, ByteSequence key, FluxSink<LockEvent> sink, Runnable created) {
        WatchOption option = WatchOption.builder().withNoDelete(true).withCreateNotify(true).build();
        return watch.watch(key, option, Watch.listener(
                response -> {
                    if (response.isCreatedNotify()) {
                        created.run();
                        return;
                    }
                    for (WatchEvent e : response.getEvents()) {
                        LockEvent.Revoked r = e.getEventType() == WatchEvent.EventType.PUT
                                ? EtcdKeys.revoked(name, e.getKeyValue().getValue()) : null;
                        if (r != null) {
                            sink.next(r);
                        }
                    }
                },
                error -> {
                    if (!EtcdErrors.isTransient(error)) {
                        sink.error(EtcdErrors.map(name, "watch", error));
                    }
                },
                sink::complete));
    }

    /**
     * Notes that one of the two watches of an events stream (the range, the revocation key) is live.
     *
     * @param live  the stream's two flags (guarded by itself)
     * @param which 0 for the range, 1 for the revocation key
     * @return whether both are live: the stream may send {@link LockEvent.Subscribed}
     */
    static boolean created(boolean[] live, int which) {
        synchronized (live) {
            live[which] = true;
            return live[0] && live[1];
        }
    }
}
