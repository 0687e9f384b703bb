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
            arm(async, path, name, sink, done, live);
        });
    }

    /**
     * The parent appeared (or went again): a change. A parent is created together with its first
     * child, so the children listed next already differ from the none seen while it was missing —
     * without this event an observer that subscribed before the first grant of a name would not
     * read again until some later change.
     */
    private static void created(AsyncCuratorFramework async, String path, String name, FluxSink<LockEvent> sink,
            AtomicBoolean done, AtomicBoolean live) {
        if (!done.get()) {
            sink.next(new LockEvent.Released(name, null, false));
        }
        arm(async, path, name, sink, done, live);
    }

    /** One-shot watches, re-armed after each change: on the children, or on the node's creation while it is missing. */
    private static void arm(AsyncCuratorFramework async, String path, String name, FluxSink<LockEvent> sink,
            AtomicBoolean done, AtomicBoolean live) {
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
                    if (live.compareAndSet(false, true)) {
                        sink.next(new LockEvent.Subscribed(name));
                    }
                    if (stat != null) {
                        created(async, path, name, sink, done, live); // created meanwhile
                    } else {
                        exists.event().thenAccept(ev -> created(async, path, name, sink, done, live));
                    }
                });
                return;
            }
            if (live.compareAndSet(false, true)) {
                sink.next(new LockEvent.Subscribed(name));
            }
            children.event().thenAccept(ev -> {
                if (!done.get()) {
                    sink.next(new LockEvent.Released(name, null, false));
                }
                arm(async, path, name, sink, done, live);
            });
        });
    }
}
