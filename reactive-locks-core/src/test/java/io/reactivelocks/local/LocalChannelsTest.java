package io.reactivelocks.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * {@code Subscribed} is told once the subscriber is registered with the name's sink: a change
 * published by whoever reacts to it (an observer's re-check, then a release) reaches the subscriber.
 */
class LocalChannelsTest {

    @Test
    void anEventPublishedWhenSubscribedArrivesReachesTheSubscriber() {
        LocalChannels channels = new LocalChannels();
        List<LockEvent> seen = new CopyOnWriteArrayList<>();
        Disposable d = channels.events("n").subscribe(e -> {
            seen.add(e);
            if (e instanceof LockEvent.Subscribed) {
                channels.publish(new LockEvent.Released("n", "o", false)); // the release right after the re-check
            }
        });
        try {
            assertThat(seen).hasSize(2);
            assertThat(seen.get(0)).isInstanceOf(LockEvent.Subscribed.class);
            assertThat(seen.get(1)).isEqualTo(new LockEvent.Released("n", "o", false));
        } finally {
            d.dispose();
        }
    }

    @Test
    void theLockStoreTellsSubscribedOnceLiveToo() {
        LocalLockStore store = new LocalLockStore();
        List<LockEvent> seen = new CopyOnWriteArrayList<>();
        Disposable d = store.events("n").subscribe(e -> {
            seen.add(e);
            if (e instanceof LockEvent.Subscribed) {
                store.grant("n", "o", Duration.ofSeconds(30), null);
                store.release("n", "o");
            }
        });
        try {
            assertThat(seen).first().isInstanceOf(LockEvent.Subscribed.class);
            assertThat(seen).anyMatch(e -> e instanceof LockEvent.Released r && r.owner().equals("o"));
        } finally {
            d.dispose();
        }
    }
}
