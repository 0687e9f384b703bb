package io.reactivelocks.local;

import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The change streams of an in-memory store: one multicast sink per name while anyone listens,
 * {@link LockEvent.Subscribed} first to each subscriber, events published to the current listeners.
 */
final class LocalChannels {

    private final ConcurrentHashMap<String, Sinks.Many<LockEvent>> channels = new ConcurrentHashMap<>();

    /**
     * @param name the name
     * @return {@code Subscribed}, then the name's events while subscribed
     */
    Flux<LockEvent> events(String name) {
        return Flux.defer(() -> {
            Sinks.Many<LockEvent> sink = channels.computeIfAbsent(name, n -> Sinks.many().multicast().directBestEffort());
            return sink.asFlux().startWith(new LockEvent.Subscribed(name)).doFinally(s -> {
                if (sink.currentSubscriberCount() == 0) {
                    channels.remove(name, sink);
                }
            });
        });
    }

    /** @param event published to the listeners of its name, if any */
    void publish(LockEvent event) {
        Sinks.Many<LockEvent> sink = channels.get(event.name());
        if (sink != null) {
            sink.emitNext(event, Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100)));
        }
    }
}
