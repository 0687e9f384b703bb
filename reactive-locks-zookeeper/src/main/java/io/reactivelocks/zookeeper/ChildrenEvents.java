package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.LockEvent;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.AsyncStage;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * The change stream of one parent node's children, for the stores whose waiters wake on any change
 * (semaphore, read-write lock): one-shot watches re-armed after each change.
 */
final class ChildrenEvents {

    private ChildrenEvents() {
    }

    /**
     * @param async the client
     * @param path  the parent node
     * @param name  the name the events carry
     * @return {@link LockEvent.Subscribed} once the first watch is set, then a
     *         {@link LockEvent.Released} on each change of the children; errors on a failed watch
     */
    static Flux<LockEvent> of(AsyncCuratorFramework async, String path, String name) {
        return Flux.create(sink -> {
            AtomicBoolean done = new AtomicBoolean();
            AtomicBoolean live = new AtomicBoolean();
            sink.onDispose(() -> done.set(true));
            arm(async, path, name, sink, done, live, false);
        });
    }

    /**
     * One-shot watches, re-armed after each change: on the children, or on the node's creation while
     * it is missing. A change is emitted only once the next watch is set, so that a read on the event
     * sees the change, and any later change fires that watch (emitting before re-arming would lose a
     * change made between the read and the re-arm). The parent appearing is a change too: it is
     * created together with its first child.
     */
    private static void arm(AsyncCuratorFramework async, String path, String name, FluxSink<LockEvent> sink,
            AtomicBoolean done, AtomicBoolean live, boolean changed) {
        if (done.get()) {
            return;
        }
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
                        arm(async, path, name, sink, done, live, changed); // created meanwhile: watch its children
                        return;
                    }
                    emit(name, sink, done, live, changed);
                    exists.event().thenAccept(ev -> arm(async, path, name, sink, done, live, true));
                });
                return;
            }
            emit(name, sink, done, live, changed);
            children.event().thenAccept(ev -> arm(async, path, name, sink, done, live, true));
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
}
