package io.reactivelocks.zookeeper;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The children of one semaphore name's node as one client sees them, for its waiters: seeded by a
 * listing, then kept by the events of the store's root watch ({@link PermitLines}), which report each
 * node created or deleted, with its path. The waiters of this client decide from this copy — without
 * a listing per attempt, a watch per wait, or a baton written for the waiter behind — so a release
 * reaches the one waiter it lets in as an event, and that waiter is granted without a request (a
 * contended permit costs its create and its delete).
 *
 * <p><b>Why the copy is safe to grant from.</b> The listing is sent after the watch is set, and every
 * later change comes as an event; ZooKeeper delivers a session's events and answers in the order of
 * the changes, so the copy equals the children as of some recent change, and the node of the
 * client's own create is in it before the create's answer arrives. Nodes below a waiting node only
 * ever leave (sequences grow; the name's container is not pruned while a node is in it), so a copy
 * that is late by some deletions counts <em>more</em> nodes below a waiter than there are: it may let
 * a waiter in late, never early.
 *
 * <p><b>When it cannot be trusted.</b> A connection change marks the copy stale ({@link #reset}) and
 * wakes every waiter, whose next attempt seeds it again. The engine's safety timer wakes a waiter
 * too, and an attempt that was not let in by this copy seeds it again, so even a lost event costs a
 * wait of that timer, not a hang.
 */
final class PermitLine {

    private final PermitLines lines;
    private final String path;

    // guarded by this
    private final TreeMap<Long, ZNodeNames.Child> nodes = new TreeMap<>();
    private boolean seeded;
    private boolean closed;
    private int users;
    private final List<Turn> turns = new ArrayList<>();

    /** A waiter of this client: let in when fewer than {@code permits} nodes are below {@code highest}, or it is gone. */
    private record Turn(long highest, int permits, Runnable byLine, MonoSink<Void> sink) {
    }

    /**
     * @param lines the store's lines, whose root watch feeds this one
     * @param path  the name's node
     */
    PermitLine(PermitLines lines, String path) {
        this.lines = lines;
        this.path = path;
    }

    /** @return the name's node */
    String path() {
        return path;
    }

    /** @return whether this line closed (the store opens another for the name) */
    synchronized boolean isClosed() {
        return closed;
    }

    /** @return whether the copy is seeded and current (no connection change since) */
    synchronized boolean seeded() {
        return seeded && !closed;
    }

    /** @return the children as this copy has them, by sequence; call when {@link #seeded()} */
    synchronized List<ZNodeNames.Child> children() {
        return new ArrayList<>(nodes.values());
    }

    /**
     * Sets the root's watch (unless set) and then lists the name's children, which become the copy at
     * the listing's answer.
     *
     * @param async the client
     * @return the listed children, by sequence
     */
    Mono<List<ZNodeNames.Child>> seed(org.apache.curator.x.async.AsyncCuratorFramework async) {
        return lines.watch().flatMap(g -> Mono.fromCompletionStage(() -> async.getChildren().forPath(path))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()))
                // runs on the thread that delivers the answer, in order with the watch's events
                .map(listed -> {
                    List<ZNodeNames.Child> out = new ArrayList<>(listed.size());
                    List<Turn> wake;
                    synchronized (this) {
                        nodes.clear();
                        for (String n : listed) {
                            ZNodeNames.Child c = ZNodeNames.parse(n);
                            if (c != null) {
                                nodes.put(c.sequence(), c);
                            }
                        }
                        out.addAll(nodes.values());
                        // the watch was set before the listing was sent, and no connection change since
                        seeded = !closed && g == lines.generation();
                        wake = seeded ? letIn() : List.of();
                    }
                    wakeByLine(wake);
                    return out;
                }));
    }

    /**
     * A waiter whose unit's highest node has sequence {@code highest} waits for its turn: completes
     * when fewer than {@code permits} nodes are below it in the copy, or it is gone, or the copy is
     * stale or closed — at once if so already.
     *
     * @param highest the sequence of the waiter's highest node
     * @param permits the waiter's N
     * @param byLine  run when this copy let it go (not a reset): its next decision may use the copy
     * @return completes when the waiter should decide again
     */
    Mono<Void> turn(long highest, int permits, Runnable byLine) {
        return Mono.create(sink -> {
            Turn t = new Turn(highest, permits, byLine, sink);
            boolean now;
            boolean current;
            synchronized (this) {
                current = seeded && !closed;
                now = !current || letsIn(t);
                if (!now) {
                    turns.add(t);
                }
            }
            if (now) {
                if (current) {
                    byLine.run();
                }
                sink.success();
                return;
            }
            sink.onDispose(() -> {
                synchronized (this) {
                    turns.remove(t);
                }
            });
        });
    }

    /** A child of the name's node was created or deleted (or changed: ignored). */
    void changed(Watcher.Event.EventType type, String child) {
        ZNodeNames.Child c = ZNodeNames.parse(child);
        if (c == null) {
            return;
        }
        List<Turn> wake;
        synchronized (this) {
            if (!seeded || closed) {
                return;
            }
            switch (type) {
                case NodeCreated -> nodes.put(c.sequence(), c);
                case NodeDeleted -> nodes.remove(c.sequence());
                default -> {
                    return;
                }
            }
            wake = letIn();
        }
        wakeByLine(wake);
    }

    /** The connection changed: events may have been missed; every waiter decides by a listing again. */
    void reset() {
        List<Turn> wake;
        synchronized (this) {
            seeded = false;
            wake = new ArrayList<>(turns);
            turns.clear();
        }
        wakeToList(wake);
    }

    /** A waiter of this client starts using the name. */
    synchronized void use() {
        users++;
    }

    /** A waiter of this client stopped using the name: the line goes with the last one. */
    void leave() {
        synchronized (this) {
            if (users > 0) {
                users--;
            }
            if (users > 0 || closed) {
                return;
            }
        }
        lines.drop(this);
    }

    /** Wakes every waiter (their next decision lists again); idempotent. */
    void close() {
        List<Turn> wake;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            seeded = false;
            wake = new ArrayList<>(turns);
            turns.clear();
        }
        wakeToList(wake);
    }

    /** @return whether the turn's node is gone or has fewer than its N nodes below it; guarded by this */
    private boolean letsIn(Turn t) {
        return !nodes.containsKey(t.highest()) || nodes.headMap(t.highest()).size() < t.permits();
    }

    /** @return the turns now let in, removed; guarded by this */
    private List<Turn> letIn() {
        List<Turn> out = new ArrayList<>();
        for (Iterator<Turn> it = turns.iterator(); it.hasNext(); ) {
            Turn t = it.next();
            if (letsIn(t)) {
                it.remove();
                out.add(t);
            }
        }
        return out;
    }

    /** Wakes turns this copy let in: their next decision may use it. */
    private static void wakeByLine(List<Turn> turns) {
        for (Turn t : turns) {
            t.byLine().run();
            t.sink().success();
        }
    }

    /** Wakes turns for a reset or close: their next decision lists again. */
    private static void wakeToList(List<Turn> turns) {
        for (Turn t : turns) {
            t.sink().success();
        }
    }

    @Override
    public String toString() {
        return "PermitLine{" + path + "}";
    }
}
