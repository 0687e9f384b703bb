package io.reactivelocks.spi.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.ConceptNotOfferedException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class AbstractLockStoreTest {

    /** A store that offers the lock only and counts how often its connections are closed. */
    static final class LockOnly extends AbstractLockStore {
        final LocalLockStore state = new LocalLockStore();
        final AtomicInteger connectionCloses = new AtomicInteger();

        LockOnly() {
            super("lock-only", EnumSet.of(Concept.LOCK));
        }

        @Override
        protected LockBackend lockBackend(LockOptions options) {
            return leftOpen(new LocalLockBackend(state));
        }

        @Override
        protected Mono<Void> closeConnections() {
            return Mono.fromRunnable(connectionCloses::incrementAndGet);
        }
    }

    @Test
    void aConceptNotOfferedIsRefusedAtOnceNamingStoreAndConcept() {
        LockOnly store = new LockOnly();
        assertThat(store.offers(Concept.SEMAPHORE)).isFalse();
        assertThatThrownBy(() -> store.semaphores(LockOptions.defaults()))
                .isInstanceOf(ConceptNotOfferedException.class)
                .hasMessageContaining("lock-only")
                .hasMessageContaining("semaphore")
                .satisfies(e -> assertThat(((ConceptNotOfferedException) e).concept()).isEqualTo(Concept.SEMAPHORE));
        assertThatThrownBy(store::fencedValues).hasMessageContaining("fenced values");
        assertThatThrownBy(() -> store.readWriteLocks(LockOptions.defaults())).hasMessageContaining("read-write lock");
    }

    @Test
    void closeClosesWhatItHandedOutThenTheConnectionsOnce() {
        LockOnly store = new LockOnly();
        var client = store.locks(LockOptions.defaults());
        var lease = client.acquire("a").block(Duration.ofSeconds(5));
        assertThat(lease).isNotNull();
        store.close().block(Duration.ofSeconds(5));
        store.close().block(Duration.ofSeconds(5));
        assertThat(store.connectionCloses).hasValue(1);
        assertThat(lease.isValid()).as("the session's close released the lease").isFalse();
        assertThat(store.state.toString()).isNotNull();
        assertThatThrownBy(() -> store.locks(LockOptions.defaults()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lock-only store session is closed");
    }

    @Test
    void aClientClosedByItsUserLeavesTheConnectionsOpen() {
        LockOnly store = new LockOnly();
        store.locks(LockOptions.defaults()).close().block(Duration.ofSeconds(5));
        assertThat(store.connectionCloses).hasValue(0);
        assertThat(store.locks(LockOptions.defaults()).tryAcquire("b").block(Duration.ofSeconds(5))).isNotNull();
        store.close().block(Duration.ofSeconds(5));
    }

    @Test
    void badArgumentsAreNamed() {
        LockOnly store = new LockOnly();
        assertThatThrownBy(() -> store.locks(null)).hasMessageContaining("options");
    }
}
