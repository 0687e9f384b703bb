package io.reactivelocks.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.RemoveWatcherOption;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link PermitLine}s of one semaphore store: the names its waiters wait on, each with its copy
 * of the name's children, fed by one persistent recursive watch ({@code addWatch}, ZooKeeper 3.6+) of
 * the store's root, set while any name has a waiter of this client and removed {@link #LINGER} after
 * the last one left.
 *
 * <p><b>Why the root, not each name's node.</b> A ZooKeeper server before 3.9 keeps one watch mode per
 * path and connection: a one-shot watch set later on the same path (an observer's listing of the
 * name's children, {@link ChildrenEvents}) would turn a persistent watch of that path into a one-shot
 * one, and the copy would stop hearing changes. Nothing sets a watch on the root itself. The price:
 * while it waits on one name, a client hears the changes of every semaphore name under the root.
 *
 * <p>Connection state events reach every watcher: a connection lost or a session expired marks every
 * copy stale (its waiters decide by a listing again, which first sets the watch again when the
 * session is new).
 */
final class PermitLines implements Watcher {

    /** How long the root's watch stays set after the last waiter left. */
    static final Duration LINGER = Duration.ofSeconds(1);

    private final AsyncCuratorFramework async;
    private final String root;

    // guarded by this
    private final Map<String, PermitLine> byPath = new HashMap<>();
    private boolean watchSet;
    private long generation;
    private boolean closed;
    private @Nullable Disposable linger;

    /**
     * @param async the client
     * @param root  the store's root (the parent of the names' nodes)
     */
    PermitLines(AsyncCuratorFramework async, String root) {
        this.async = async;
        this.root = root;
    }

    /**
     * @param path a name's node
     * @return the name's line: the open one, else a new one, not seeded yet
     */
    synchronized PermitLine line(String path) {
        PermitLine line = byPath.get(path);
        if (line == null || line.isClosed()) {
            line = new PermitLine(this, path);
            byPath.put(path, line);
        }
        if (linger != null) {
            linger.dispose();
            linger = null;
        }
        return line;
    }

    /** @return the count of connection changes so far: a copy seeded in an earlier one is stale */
    synchronized long generation() {
        return generation;
    }

    /**
     * Sets the root's watch unless it is set in this connection generation.
     *
     * @return the generation in which it is set
     */
    Mono<Long> watch() {
        return Mono.defer(() -> {
            long g;
            synchronized (this) {
                g = generation;
                if (watchSet) {
                    return Mono.just(g);
                }
            }
            return Mono.fromCompletionStage(() -> async.addWatch().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher(this).forPath(root))
                    .then(Mono.fromSupplier(() -> {
                        synchronized (this) {
                            if (g == generation && !closed) {
                                watchSet = true;
                            }
                        }
                        return g;
                    }));
        });
    }

    /** A line without waiters goes; the root's watch {@link #LINGER} after the last one. */
    void drop(PermitLine line) {
        synchronized (this) {
            byPath.remove(line.path(), line);
            if (byPath.isEmpty() && linger == null && !closed) {
                linger = Mono.delay(LINGER, Schedulers.parallel()).subscribe(x -> unwatchIfUnused());
            }
        }
        line.close();
    }

    private void unwatchIfUnused() {
        synchronized (this) {
            linger = null;
            if (!byPath.isEmpty() || !watchSet) {
                return;
            }
            watchSet = false;
            generation++;
        }
        unwatch();
    }

    /**
     * Removes the root's watch: {@code WatcherType.Any} (a server before 3.9 does not know the
     * persistent types and answers a marshalling error), else on this side at least.
     */
    private void unwatch() {
        Mono.fromCompletionStage(() -> async.removeWatches().removing(this, WatcherType.Any).forPath(root))
                .onErrorResume(e -> Mono.fromCompletionStage(() -> async.removeWatches()
                        .removing(this, WatcherType.Any, Set.of(RemoveWatcherOption.local)).forPath(root)))
                .subscribe(null, e -> { /* not set on the server any more (a new session), or the client closed */ });
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.None) {
            if (event.getState() == Event.KeeperState.SyncConnected) {
                return; // connected again: the copies were marked stale when the connection went
            }
            // disconnected, expired, closed: events may have been missed; a new session has no watch
            List<PermitLine> stale;
            synchronized (this) {
                generation++;
                if (event.getState() != Event.KeeperState.Disconnected) {
                    watchSet = false;
                }
                stale = new ArrayList<>(byPath.values());
            }
            stale.forEach(PermitLine::reset);
            return;
        }
        String p = event.getPath();
        int slash = p == null ? -1 : p.lastIndexOf('/');
        if (slash <= 0) {
            return;
        }
        PermitLine line;
        synchronized (this) {
            line = byPath.get(p.substring(0, slash));
        }
        if (line != null) {
            line.changed(event.getType(), p.substring(slash + 1));
        }
    }

    /** Closes every line and removes the root's watch (the store closes). */
    void close() {
        List<PermitLine> all;
        boolean set;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(byPath.values());
            byPath.clear();
            set = watchSet;
            watchSet = false;
            if (linger != null) {
                linger.dispose();
                linger = null;
            }
        }
        all.forEach(PermitLine::close);
        if (set) {
            unwatch();
        }
    }

    @Override
    public String toString() {
        return "PermitLines{" + root + "}";
    }
}
