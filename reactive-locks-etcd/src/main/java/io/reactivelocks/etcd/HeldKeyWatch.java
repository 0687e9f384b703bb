package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.reactivelocks.spi.HeldLock;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * The watch each held lock keeps on its own key (an idle watch stream, no round trips): a key
 * deleted behind the client's back — by an operator, by a forged release, by a revoke seen before
 * the next keep-alive — ends that hold stream at once, which the session alone would not notice.
 */
final class HeldKeyWatch {

    private final KV kv;
    private final Watch watch;
    private final EtcdKeys keys;
    private final EtcdLockOptions options;

    HeldKeyWatch(KV kv, Watch watch, EtcdKeys keys, EtcdLockOptions options) {
        this.kv = kv;
        this.watch = watch;
        this.keys = keys;
        this.options = options;
    }

    /** Completes when the held key of {@code lease} is deleted (or was already replaced or gone). */
    Mono<Void> keyGone(HeldLock lease) {
        ByteSequence key = keys.owner(lease.name(), lease.owner());
        return keyGone(lease, key, lease.token() + 1);
    }

    private Mono<Void> keyGone(HeldLock lease, ByteSequence key, long fromRevision) {
        return Mono.<Boolean>create(sink -> {
            WatchOption option = WatchOption.builder().withRevision(fromRevision).withNoPut(true).build();
            Watch.Watcher w = watch.watch(key, option, Watch.listener(
                    response -> {
                        if (!response.getEvents().isEmpty()) {
                            sink.success(true);
                        }
                    },
                    error -> sink.success(false),
                    () -> sink.success(false)));
            sink.onDispose(w::close);
        }).flatMap(deleted -> deleted ? Mono.<Void>empty() : recheckKey(lease, key, fromRevision));
    }

    /** After a failed watch: gone (complete), still ours (watch again from now), or unknown (watch again). */
    private Mono<Void> recheckKey(HeldLock lease, ByteSequence key, long fromRevision) {
        return Mono.delay(EtcdLockBackend.WATCH_RETRY, options.scheduler())
                .then(Mono.fromFuture(() -> kv.get(key))
                        .timeout(options.requestTimeout(), options.scheduler())
                        .map(Optional::of)
                        .onErrorReturn(Optional.empty()))
                .flatMap(found -> {
                    if (found.isEmpty()) {
                        return keyGone(lease, key, fromRevision); // etcd unreachable: the session's deadline rules
                    }
                    List<KeyValue> kvs = found.get().getKvs();
                    if (kvs.isEmpty() || kvs.get(0).getCreateRevision() != lease.token()) {
                        return Mono.<Void>empty();
                    }
                    return keyGone(lease, key, found.get().getHeader().getRevision() + 1);
                });
    }
}
