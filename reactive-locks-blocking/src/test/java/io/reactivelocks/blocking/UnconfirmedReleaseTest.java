package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** A blocking body that finished keeps its result when the store does not confirm the release. */
class UnconfirmedReleaseTest {

    @Test
    void aFinishedBodyKeepsItsResultAndTheUnconfirmedReleaseIsReported() throws Exception {
        List<String> reported = new CopyOnWriteArrayList<>();
        LockClient client = LockClient.create(new ReleaseFails(new LocalLockBackend(new LocalLockStore())),
                LockOptions.defaults().mutate().requestTimeout(Duration.ofSeconds(2)).build(),
                new LockListener() {
                    @Override
                    public void onReleaseUnconfirmed(String name, long token, Throwable error) {
                        reported.add(name);
                    }
                });
        try {
            BlockingLocks locks = BlockingLocks.of(client);
            Integer result = locks.withLock("done", lease -> 42);
            assertThat(result).isEqualTo(42);
            assertThatThrownBy(() -> locks.withLock("failed", lease -> {
                throw new IllegalStateException("body");
            })).isInstanceOf(IllegalStateException.class).hasMessage("body");
            assertThat(reported).containsExactly("done", "failed");
            assertThat(client.metrics().unconfirmedReleaseCount()).isEqualTo(2);
            assertThat(client.metrics().heldLeaseCount()).isZero();
        } finally {
            client.close().block(Duration.ofSeconds(10));
        }
    }

    /** The in-memory store, except that every release fails as a store that went away would. */
    private static final class ReleaseFails extends DelegatingLockBackend {
        ReleaseFails(LockBackend delegate) {
            super(delegate);
        }

        @Override
        public Mono<Boolean> release(String name, String owner) {
            return Mono.error(new LockBackendException(name, "connection reset", null, true));
        }
    }
}
