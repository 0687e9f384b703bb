package io.reactivelocks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockListenerCompositeTest {

    private final List<String> events = new ArrayList<>();

    private LockListener recorder(String id) {
        return new LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                events.add(id + " acquired " + name + " " + token);
            }

            @Override
            public void onLost(String name, long token, String reason, Duration held) {
                events.add(id + " lost " + name + " " + reason);
            }
        };
    }

    private final LockListener throwing = new LockListener() {
        @Override
        public void onAcquired(String name, long token, Duration waited) {
            throw new IllegalStateException("listener bug");
        }

        @Override
        public void onReleased(String name, long token, Duration held) {
            throw new IllegalStateException("listener bug");
        }
    };

    @Test
    void everyListenerHearsEveryEventInOrderWhateverAnotherThrows() {
        LockListener all = LockListener.composite(recorder("a"), throwing, recorder("b"));
        all.onAcquired("x", 7, Duration.ZERO);
        all.onLost("x", 7, "expired", Duration.ofSeconds(1));
        all.onReleased("x", 7, Duration.ZERO);
        assertThat(events).containsExactly("a acquired x 7", "b acquired x 7", "a lost x expired", "b lost x expired");
    }

    @Test
    void nothingToCombineIsNone() {
        assertThat(LockListener.composite()).isSameAs(LockListener.NONE);
        assertThat(LockListener.composite(LockListener.NONE, LockListener.NONE)).isSameAs(LockListener.NONE);
    }

    @Test
    void nullListenersAreRefusedAtCallTime() {
        assertThatThrownBy(() -> LockListener.composite((LockListener[]) null)).isInstanceOf(NullPointerException.class)
                .hasMessage("listeners");
        assertThatThrownBy(() -> LockListener.composite(LockListener.NONE, null)).isInstanceOf(NullPointerException.class)
                .hasMessage("listeners[1]");
    }
}
