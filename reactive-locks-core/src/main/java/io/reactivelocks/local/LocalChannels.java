package io.reactivelocks.local;

import io.reactivelocks.spi.LockEvent;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The change streams of an in-memory store: one multicast sink per name while anyone listens,
 * {@link LockEvent.Subscribed} first to each subscriber, events published to the current listeners.
 * Publishing is serialized by a queue drained by one thread at a time: a listener that reacts to an
 * event by asking the store again (whose answer publishes) on the same thread only queues its event,
 * and concurrent publishers never spin on the sink.
 */
final class LocalChannels {

    /** One name's sink and its publishing queue. */
    private static final class Channel {
        final Sinks.Many<LockEvent> sink = Sinks.many().multicast().directBestEffort();
        final Queue<LockEvent> queue = new ConcurrentLinkedQueue<>();
        final AtomicInteger wip = new AtomicInteger();
    }

    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

    /**
     * @param name the name
     * @return {@code Subscribed}, then the name's events while subscribed
     */
    Flux<LockEvent> events(String name) {
        return Flux.defer(() -> {
            Channel channel = channels.computeIfAbsent(name, n -> new Channel());
            return channel.sink.asFlux().startWith(new LockEvent.Subscribed(name)).doFinally(s -> {
                if (channel.sink.currentSubscriberCount() == 0) {
                    channels.remove(name, channel);
                }
            });
        });
    }

    /** @param event published to the listeners of its name, if any */
    void publish(LockEvent event) {
        Channel channel = channels.get(event.name());
        if (channel == null) {
            return;
        }
        channel.queue.offer(event);
        if (channel.wip.getAndIncrement() != 0) {
            return; // the thread draining now (perhaps this one, further up the stack) emits it
        }
        int missed = 1;
        do {
            LockEvent next;
            while ((next = channel.queue.poll()) != null) {
                channel.sink.tryEmitNext(next); // serialized here: only "no subscriber" can fail, and nobody listens then
            }
            missed = channel.wip.addAndGet(-missed);
        } while (missed != 0);
    }
}
