package io.reactivelocks.internal;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;

/**
 * One shared subscription to {@link LockBackend#events} per lock name, ref-counted: the first
 * subscriber (a waiter or an observer) opens it, the last one closes it.
 */
final class NotificationHub {

    private final LockBackend backend;
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

    NotificationHub(LockBackend backend) {
        this.backend = backend;
    }

    /**
     * @param name the lock name
     * @return the shared events of {@code name}; a subscriber that joins a live channel does not
     *         see its {@link LockEvent.Subscribed}
     */
    Flux<LockEvent> events(String name) {
        return Flux.defer(() -> channels.computeIfAbsent(name, Channel::new).shared);
    }

    private final class Channel {
        final Flux<LockEvent> shared;

        Channel(String name) {
            this.shared = backend.events(name)
                    .doFinally(s -> channels.remove(name, this))
                    .publish()
                    .refCount();
        }
    }
}
