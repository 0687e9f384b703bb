package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.LockEvent;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * The change stream of one parent node's children, for the stores whose waiters wake on any change
 * (semaphore, read-write lock): one-shot watches re-armed after each change. A data watch on the
 * name's revocation node (a sibling of the parent, {@link GrantRevocations}), re-armed after each
 * change too (an exists watch while that node is missing), reports the revocation requests written
 * into its data while the stream watches. The parent's own data is not watched: each create of a
 * grant node writes it (see {@link ZooKeeperReadWriteStore}), and a children watch does not fire on
 * a data change, so those writes are reported as nothing.
 */
final class ChildrenEvents {

    private ChildrenEvents() {
    }

    /**
     * @param async      the client
     * @param path       the parent node
     * @param revocation the name's revocation node ({@link GrantRevocations})
     * @param name       the name the events carry
     * @return {@link LockEvent.Subscribed} once the first watch is set, then a
     *         {@link LockEvent.Released} on each change of the children and a
     *         {@link LockEvent.Revoked} for each revocation request written into the revocation
     *         node's data while the stream watches; errors on a failed watch
     */
    static Flux<LockEvent> of(AsyncCuratorFramework async, String path, String revocation, String name) {
        return Flux.create(sink -> {
            AtomicBoolean done = new AtomicBoolean();
            AtomicBoolean live = new AtomicBoolean();
            Revocations revocations = new Revocations(async, revocation, name, sink, done);
            sink.onDispose(() -> done.set(true));
            arm(async, path, name, sink, done, live, false, revocations);
        });
    }

    /**
     * One-shot watches, re-armed after each change: on the children, or on the node's creation while
     * it is missing. A change is emitted only once the next watch is set, so that a read on the event
     * sees the change, and any later change fires that watch (emitting before re-arming would lose a
     * change made between the read and the re-arm). The parent appearing is a change too: it is
     * created together with its first child. The watch on the revocation node is set first (unless
     * it is set already), so that its request goes first on the connection and the watch is in place
     * once {@code Subscribed} is sent (for a missing revocation node, the exists watch is sent from
     * the answer to the data read, which comes before the answer to the children's).
     */
    private static void arm(AsyncCuratorFramework async, String path, String name, FluxSink<LockEvent> sink,
            AtomicBoolean done, AtomicBoolean live, boolean changed, Revocations revocations) {
        if (done.get()) {
            return;
        }
        revocations.arm();
        AsyncStage<List<String>> children = async.watched().getChildren().forPath(path);
        children.whenComplete((list, error) -> {
            if (error != null && ZooKeeperErrors.code(error) != KeeperException.Code.NONODE) {
                sink.error(ZooKeeperErrors.map(name, "watch", error));
                return;
            }
            if (error != null) {
                AsyncStage<Stat> exists = async.watched().checkExists().forPath(path);
                exists.whenComplete((stat, e2) -> {
                    if (e2 != null) {
                        sink.error(ZooKeeperErrors.map(name, "watch", e2));
                        return;
                    }
                    if (stat != null) {
                        arm(async, path, name, sink, done, live, changed, revocations); // created meanwhile: watch its children
                        return;
                    }
                    emit(name, sink, done, live, changed);
                    exists.event().thenAccept(ev -> arm(async, path, name, sink, done, live, true, revocations));
                });
                return;
            }
            emit(name, sink, done, live, changed);
            children.event().thenAccept(ev -> arm(async, path, name, sink, done, live, true, revocations));
        });
    }

    /** Once a watch is set: {@code Subscribed} the first time, then a change if one led here. */
    private static void emit(String name, FluxSink<LockEvent> sink, AtomicBoolean done, AtomicBoolean live, boolean changed) {
        if (done.get()) {
            return;
        }
        if (live.compareAndSet(false, true)) {
            sink.next(new LockEvent.Subscribed(name));
        } else if (changed) {
            sink.next(new LockEvent.Released(name, null, false));
        }
    }

    /**
     * The data watch of one stream on the name's revocation node: reads the data (setting a one-shot
     * watch), reports the requests tagged above the data version it read last, and reads again on
     * the next change of the data, or after a connection state change (the watch may be gone with the
     * session: a second one is harmless, as a request is reported by its version once). While the
     * node is missing, an exists watch reads it once it is created. The first read of a node reports
     * nothing (its requests are older than the stream); a node created since (another czxid, or none
     * before) reports all its requests, the one its create wrote too (tagged 0).
     */
    private static final class Revocations {

        private final AsyncCuratorFramework async;
        private final String path;
        private final String name;
        private final FluxSink<LockEvent> sink;
        private final AtomicBoolean done;
        // guarded by this
        private boolean watched;
        private boolean known;
        private long czxid; // 0: the node did not exist
        private int version;

        Revocations(AsyncCuratorFramework async, String path, String name, FluxSink<LockEvent> sink, AtomicBoolean done) {
            this.async = async;
            this.path = path;
            this.name = name;
            this.sink = sink;
            this.done = done;
        }

        /** Sets the data watch (the exists watch while the node is missing) unless one is set. */
        void arm() {
            synchronized (this) {
                if (done.get() || watched) {
                    return;
                }
                watched = true;
            }
            Stat stat = new Stat();
            AsyncStage<byte[]> stage = async.watched().getData().storingStatIn(stat).forPath(path);
            stage.whenComplete((data, error) -> {
                if (done.get()) {
                    return;
                }
                if (error != null) {
                    if (ZooKeeperErrors.code(error) == KeeperException.Code.NONODE) {
                        synchronized (this) {
                            known = true;
                            czxid = 0;
                            version = 0;
                        }
                        awaitCreation();
                        return;
                    }
                    failed(error);
                    return;
                }
                // changed, or deleted (then the read sets the exists watch)
                stage.event().whenComplete((e, lost) -> fired(lost));
                onData(stat, data);
            });
        }

        /** The node is missing: an exists watch, which fires on its creation (read then); still {@code watched}. */
        private void awaitCreation() {
            AsyncStage<Stat> exists = async.watched().checkExists().forPath(path);
            exists.whenComplete((stat, error) -> {
                if (done.get()) {
                    return;
                }
                if (error != null) {
                    failed(error);
                    return;
                }
                if (stat != null) { // created meanwhile: read again
                    fired(null);
                    return;
                }
                exists.event().whenComplete((e, lost) -> fired(lost));
            });
        }

        /**
         * A one-shot watch fired: read (and watch) again — at once, or once the connection is back when
         * {@code lost} says its state changed.
         */
        private void fired(@Nullable Throwable lost) {
            synchronized (this) {
                watched = false;
            }
            if (lost != null) {
                retryLater();
            } else {
                arm();
            }
        }

        /** A read or watch failed: again shortly when transient, else the stream ends with the error. */
        private void failed(Throwable error) {
            synchronized (this) {
                watched = false;
            }
            if (ZooKeeperErrors.isTransient(error)) {
                retryLater();
            } else {
                sink.error(ZooKeeperErrors.map(name, "watch", error));
            }
        }

        private void retryLater() {
            Mono.delay(ZooKeeperLockBackend.RETRY_DELAY).subscribe(x -> arm(), e -> { });
        }

        /** Reports the requests of {@code data} written since the last read. */
        private void onData(Stat stat, byte[] data) {
            int after;
            synchronized (this) {
                if (!known) {
                    after = Integer.MAX_VALUE;
                } else if (stat.getCzxid() == czxid) {
                    after = version;
                } else {
                    after = -1; // created since: all of it, the entry of the create (0) too
                }
                if (!known || stat.getCzxid() != czxid || stat.getVersion() > version) {
                    known = true;
                    czxid = stat.getCzxid();
                    version = stat.getVersion();
                }
            }
            if (stat.getVersion() <= after) {
                return;
            }
            List<GrantRevocations.Entry> entries = new ArrayList<>(GrantRevocations.decode(data));
            entries.sort(Comparator.comparingInt(GrantRevocations.Entry::version));
            for (GrantRevocations.Entry entry : entries) {
                LockEvent.Revoked request = entry.version() > after ? entry.request(name) : null;
                if (request != null && !done.get()) {
                    sink.next(request);
                }
            }
        }
    }
}
