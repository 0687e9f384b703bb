package io.reactivelocks.local;

import io.reactivelocks.spi.LockEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
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
            return liveThenSubscribed(name, channel.sink, () -> {
                if (channel.sink.currentSubscriberCount() == 0) {
                    channels.remove(name, channel);
                }
            });
        });
    }

    /**
     * A subscriber of {@code sink} that is told {@link LockEvent.Subscribed} only once it is registered
     * with the sink: a change published after the subscriber's re-check (which {@code Subscribed}
     * triggers) reaches it. ({@code startWith(Subscribed)} emits first and subscribes after: a release
     * between the two was lost, and an observer that had re-read the lock as held waited for its
     * lease's end — a loaded CI run's blocking-facade test timed out so.) Events the sink delivers
     * before {@code Subscribed} went out are held back and follow it.
     *
     * @param name  the name
     * @param sink  the name's sink
     * @param onEnd runs when the subscriber leaves (cancel, or the sink's end)
     * @return {@code Subscribed}, then the sink's events
     */
    static Flux<LockEvent> liveThenSubscribed(String name, Sinks.Many<LockEvent> sink, Runnable onEnd) {
        return Flux.<LockEvent>create(out -> {
            List<LockEvent> early = new ArrayList<>();
            boolean[] told = new boolean[1];
            Disposable live = sink.asFlux().subscribe(e -> {
                synchronized (early) {
                    if (!told[0]) {
                        early.add(e);
                        return;
                    }
                }
                out.next(e);
            }, out::error, out::complete);
            synchronized (early) {
                out.next(new LockEvent.Subscribed(name));
                early.forEach(out::next);
                early.clear();
                told[0] = true;
            }
            out.onDispose(() -> {
                live.dispose();
                onEnd.run();
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
