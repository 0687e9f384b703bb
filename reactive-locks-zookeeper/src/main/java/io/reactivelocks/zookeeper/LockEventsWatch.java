package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.LockEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.curator.x.async.WatchMode;
import org.apache.curator.x.async.api.AsyncCuratorFrameworkDsl;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.FluxSink;

/**
 * One {@link ZooKeeperLockBackend#events} stream: children watches on the lock's node, set again
 * after each firing (and, when the node does not exist, an exists-watch for its creation), and a
 * data watch on the lowest child. {@link LockEvent.Subscribed} once the first watch is set, and
 * again after a reconnection; {@link LockEvent.Released} when the lowest child disappears,
 * {@link LockEvent.Acquired} (token 0) when another child becomes lowest, once its data watch is
 * set, and again on each change of its data. Transient failures are retried after a short delay;
 * a permanent one ends the stream with an error. {@link #dispose()} removes the watches.
 *
 * <p>Revocation requests ({@link ZooKeeperLockBackend#revoke}) are written into the data of the
 * lock's revocation node {@code <root>/r-<name>} ({@link ZNodeNames#revocationPath}), a sibling of the
 * lock's node: a data watch on it (an exists watch while it does not exist, which fires on its
 * creation), set before the children watch so the request goes first on the connection and is in
 * place once {@code Subscribed} is sent, reports each request found written since the stream's
 * previous read as {@link LockEvent.Revoked}. The data a stream finds when it first reads the node
 * is an old request, not reported; a change is told apart by the node's data version (or a new
 * node: one created since the previous read), so a watch set twice (after a reconnection) reports a
 * request once. The lock's node is not data-watched: its data only counts the creates of children.
 */
final class LockEventsWatch {

    private final String name;
    private final String lockPath;
    private final String revocationPath;
    private final FluxSink<LockEvent> sink;
    private final ZooKeeperSession session;
    private final ZooKeeperLockOptions options;
    private final Set<LockEventsWatch> registry;
    private final WatcherRemoveCuratorFramework watchers;
    private final AsyncCuratorFrameworkDsl watching;
    private final AtomicLong generation = new AtomicLong();
    private volatile boolean done;
    private Disposable reconnects;
    private volatile Disposable retryTimer;
    // guarded by this
    private boolean subscribed;
    private boolean resubscribe;
    private ZNodeNames.Child lowest;
    // guarded by this: the watch on the revocation node, and what its last read found
    private boolean revocationsWatched;
    private boolean revocationKnown;
    private long revocationCzxid; // 0: the node did not exist
    private int revocationVersion;

    /**
     * @param name     the lock watched
     * @param sink     where the events go
     * @param client   the Curator client (a watcher-removing view of it holds this stream's watches)
     * @param paths    where the lock's node and its revocation node are
     * @param session  the connection's states (a reconnection sets the watches again)
     * @param options  the scheduler of the retries
     * @param registry the backend's open event streams: {@link #dispose()} removes this one
     */
    LockEventsWatch(String name, FluxSink<LockEvent> sink, CuratorFramework client, ZNodeNames paths,
                    ZooKeeperSession session, ZooKeeperLockOptions options, Set<LockEventsWatch> registry) {
        this.name = name;
        this.lockPath = paths.lockPath(name);
        this.revocationPath = paths.revocationPath(name);
        this.sink = sink;
        this.session = session;
        this.options = options;
        this.registry = registry;
        this.watchers = client.newWatcherRemoveCuratorFramework();
        this.watching = AsyncCuratorFramework.wrap(watchers).with(WatchMode.successOnly);
    }

    void start() {
        reconnects = session.reconnects().subscribe(s -> {
            synchronized (this) {
                resubscribe = true;
                revocationsWatched = false; // gone with an expired session: set again (a second one is harmless)
            }
            arm();
        });
        arm();
    }

    private void arm() {
        if (done) {
            return;
        }
        long g = generation.incrementAndGet();
        armRevocations(); // first: its request goes before the children's on the connection
        AsyncStage<List<String>> stage;
        try {
            stage = watching.watched().getChildren().forPath(lockPath);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((children, error) -> {
            if (done || g != generation.get()) {
                return;
            }
            if (error != null) {
                onError(g, error);
                return;
            }
            stage.event().thenAccept(e -> rearm(g));
            onChildren(ZNodeNames.sorted(children));
        });
    }

    /** The lock's node does not exist: the lock is free; watch for the node's creation. */
    private void armExists(long g) {
        AsyncStage<Stat> stage;
        try {
            stage = watching.watched().checkExists().forPath(lockPath);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((stat, error) -> {
            if (done || g != generation.get()) {
                return;
            }
            if (error != null) {
                onError(g, error);
                return;
            }
            if (stat != null) {
                arm(); // created meanwhile: watch its children
                return;
            }
            stage.event().thenAccept(e -> rearm(g));
            onChildren(List.of());
        });
    }

    private void rearm(long g) {
        if (!done && g == generation.get()) {
            arm();
        }
    }

    private void onError(long g, Throwable error) {
        if (ZooKeeperErrors.code(error) == KeeperException.Code.NONODE) {
            armExists(g);
        } else if (ZooKeeperErrors.isTransient(error)) {
            try {
                retryTimer = options.scheduler().schedule(() -> rearm(g), ZooKeeperLockBackend.RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
                if (done) {
                    retryTimer.dispose();
                }
            } catch (java.util.concurrent.RejectedExecutionException e) {
                fail(e);
            }
        } else {
            fail(error);
        }
    }

    private void onChildren(List<ZNodeNames.Child> children) {
        ZNodeNames.Child now = children.isEmpty() ? null : children.get(0);
        ZNodeNames.Child watchData = null;
        List<LockEvent> out = new ArrayList<>(2);
        synchronized (this) {
            if (!subscribed || resubscribe) {
                subscribed = true;
                resubscribe = false;
                out.add(new LockEvent.Subscribed(name));
            } else {
                boolean changed = now == null ? lowest != null : lowest == null || !now.node().equals(lowest.node());
                if (changed && lowest != null) {
                    out.add(new LockEvent.Released(name, lowest.owner(), false));
                }
                if (changed && now != null) {
                    watchData = now;
                }
            }
            if (out.size() == 1 && out.get(0) instanceof LockEvent.Subscribed && now != null) {
                watchData = now; // (again) after a reconnection: the data watch may be gone with the session
            }
            lowest = now;
        }
        for (LockEvent e : out) {
            if (!done) {
                sink.next(e);
            }
        }
        if (watchData != null) {
            armData(watchData);
        }
    }

    /**
     * Watches the data of the lowest child; announces it as {@link LockEvent.Acquired} once
     * the watch is set (a re-read from then on sees every later change), and again after
     * each data change while it is still the lowest.
     */
    private void armData(ZNodeNames.Child child) {
        if (done) {
            return;
        }
        AsyncStage<Stat> stage;
        try {
            stage = watching.watched().checkExists().forPath(lockPath + "/" + child.node());
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((stat, error) -> {
            boolean lowestNow;
            synchronized (this) {
                lowestNow = lowest != null && lowest.node().equals(child.node());
            }
            if (done || !lowestNow) {
                return; // replaced: the children watch reports what comes next
            }
            if (error != null && ZooKeeperErrors.isTransient(error)) {
                try {
                    options.scheduler().schedule(() -> armData(child), ZooKeeperLockBackend.RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    fail(e);
                }
                return;
            }
            if (error != null || stat == null) {
                return; // gone: the children watch reports it
            }
            sink.next(new LockEvent.Acquired(name, child.owner(), 0));
            stage.event().thenAccept(e -> {
                if (e.getType() == org.apache.zookeeper.Watcher.Event.EventType.NodeDataChanged) {
                    armData(child);
                }
            });
        });
    }

    /**
     * Sets the watch on the revocation node unless one is set: reads its data with a data watch and
     * reports a request written since the previous read ({@link #onRevocationData}); when the node does
     * not exist, an exists watch instead (a node found by it is read at once). Either watch, once fired,
     * is set again.
     */
    private void armRevocations() {
        synchronized (this) {
            if (done || revocationsWatched) {
                return;
            }
            revocationsWatched = true;
        }
        Stat stat = new Stat();
        AsyncStage<byte[]> stage;
        try {
            stage = watching.watched().getData().storingStatIn(stat).forPath(revocationPath);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((data, error) -> {
            if (done) {
                return;
            }
            if (error != null) {
                if (ZooKeeperErrors.code(error) == KeeperException.Code.NONODE) {
                    onRevocationData(null, null);
                    armRevocationExists();
                } else {
                    retryRevocations(error);
                }
                return;
            }
            stage.event().thenAccept(e -> rearmRevocations());
            onRevocationData(stat, data);
        });
    }

    /** The revocation node does not exist (yet): an exists watch, which fires on its creation. */
    private void armRevocationExists() {
        AsyncStage<Stat> stage;
        try {
            stage = watching.watched().checkExists().forPath(revocationPath);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((stat, error) -> {
            if (done) {
                return;
            }
            if (error != null) {
                retryRevocations(error);
            } else if (stat != null) {
                rearmRevocations(); // created meanwhile: read it (a request written since the previous read)
            } else {
                stage.event().thenAccept(e -> rearmRevocations());
            }
        });
    }

    private void rearmRevocations() {
        synchronized (this) {
            revocationsWatched = false;
        }
        armRevocations();
    }

    private void retryRevocations(Throwable error) {
        synchronized (this) {
            revocationsWatched = false;
        }
        if (ZooKeeperErrors.isTransient(error)) {
            try {
                options.scheduler().schedule(this::armRevocations, ZooKeeperLockBackend.RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                fail(e);
            }
        } else {
            fail(error);
        }
    }

    /**
     * Reports the revocation request in the revocation node's data when it was written since the
     * previous read: a later version of the node read before, or a node that did not exist then (or was
     * made again since); never on the stream's first read, whose data is older than the stream.
     *
     * @param stat the node's stat, or {@code null} when it does not exist
     */
    private void onRevocationData(@Nullable Stat stat, byte @Nullable [] data) {
        long czxid = stat == null ? 0 : stat.getCzxid();
        int version = stat == null ? 0 : stat.getVersion();
        boolean changed;
        synchronized (this) {
            if (!revocationKnown) {
                changed = false;
            } else if (czxid == revocationCzxid) {
                changed = version > revocationVersion;
            } else {
                changed = stat != null; // a node created since: its first data is a request too
            }
            if (!revocationKnown || czxid != revocationCzxid || version > revocationVersion) {
                revocationKnown = true;
                revocationCzxid = czxid;
                revocationVersion = version;
            }
        }
        LockEvent.Revoked request = changed ? LockNodes.revoked(name, data) : null;
        if (request != null && !done) {
            sink.next(request);
        }
    }

    private void fail(Throwable error) {
        if (!done) {
            sink.error(ZooKeeperErrors.map(name, "watch", error));
        }
    }

    void complete() {
        sink.complete();
    }

    void dispose() {
        done = true;
        registry.remove(this);
        Disposable retry = retryTimer;
        if (retry != null) {
            retry.dispose();
        }
        if (reconnects != null) {
            reconnects.dispose();
        }
        watchers.removeWatchers();
    }
}
