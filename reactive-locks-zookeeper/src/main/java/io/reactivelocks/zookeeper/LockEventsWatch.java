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
 * lock's node itself: a data watch on it (set before the children watch, so the request goes first
 * on the connection and is in place once {@code Subscribed} is sent) reports each change of that
 * data made while this stream watches as {@link LockEvent.Revoked}. The data a stream finds when it
 * first reads the node is an old request, not reported; a change is told apart by the node's data
 * version (or a new node: one created while this stream watched, with data written on it), so a
 * watch set twice (after a reconnection) reports a request once.
 */
final class LockEventsWatch {

    private final String name;
    private final String lockPath;
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
    // guarded by this: the data watch on the lock's node (revocation requests)
    private boolean revocationsWatched;
    private boolean lockNodeKnown;
    private long lockNodeCzxid; // 0: the node did not exist
    private int lockNodeVersion;

    /**
     * @param name     the lock watched
     * @param sink     where the events go
     * @param client   the Curator client (a watcher-removing view of it holds this stream's watches)
     * @param paths    where the lock's node is
     * @param session  the connection's states (a reconnection sets the watches again)
     * @param options  the scheduler of the retries
     * @param registry the backend's open event streams: {@link #dispose()} removes this one
     */
    LockEventsWatch(String name, FluxSink<LockEvent> sink, CuratorFramework client, ZNodeNames paths,
                    ZooKeeperSession session, ZooKeeperLockOptions options, Set<LockEventsWatch> registry) {
        this.name = name;
        this.lockPath = paths.lockPath(name);
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
     * Sets the data watch on the lock's node unless one is set: reads its data, reports a request
     * written since the last read ({@link #onLockNodeData}), and on the next change of its data sets
     * the watch again. A missing node sets no watch: {@link #arm} tries again once the children
     * watch (or the exists watch) sees it created.
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
            stage = watching.watched().getData().storingStatIn(stat).forPath(lockPath);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        stage.whenComplete((data, error) -> {
            if (done) {
                return;
            }
            if (error != null) {
                boolean missing = ZooKeeperErrors.code(error) == KeeperException.Code.NONODE;
                synchronized (this) {
                    revocationsWatched = false;
                    if (missing) {
                        lockNodeKnown = true;
                        lockNodeCzxid = 0;
                        lockNodeVersion = 0;
                    }
                }
                if (missing) {
                    return; // arm() sets it once the node is there
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
                return;
            }
            stage.event().thenAccept(e -> {
                synchronized (this) {
                    revocationsWatched = false;
                }
                if (e.getType() == org.apache.zookeeper.Watcher.Event.EventType.NodeDataChanged) {
                    armRevocations();
                } // NodeDeleted: the children watch fires too, and its arm() sets this again once the node is back
            });
            onLockNodeData(stat, data);
        });
    }

    /**
     * Reports the revocation request in the lock node's data when it was written while this stream
     * watched: a later version of the node read before, or a node created since (data version above
     * 0); never on the stream's first read, whose data is older than the stream.
     */
    private void onLockNodeData(Stat stat, byte[] data) {
        boolean changed;
        synchronized (this) {
            if (!lockNodeKnown) {
                changed = false;
            } else if (stat.getCzxid() == lockNodeCzxid) {
                changed = stat.getVersion() > lockNodeVersion;
            } else {
                changed = stat.getVersion() > 0;
            }
            if (!lockNodeKnown || stat.getCzxid() != lockNodeCzxid || stat.getVersion() > lockNodeVersion) {
                lockNodeKnown = true;
                lockNodeCzxid = stat.getCzxid();
                lockNodeVersion = stat.getVersion();
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
