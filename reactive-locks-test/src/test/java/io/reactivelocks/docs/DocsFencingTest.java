package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.Fencing;
import io.reactivelocks.local.LocalFencedValues;
import io.reactivelocks.local.LocalLockBackend;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/fencing.md, run on the in-memory store. */
class DocsFencingTest {

    static final Duration STEP = Duration.ofSeconds(10);

    LockClient locks = LocalLockBackend.client();
    // tag::values[]
    FencedValues config = new LocalFencedValues();      // store.fencedValues(), store = RedisLocks.connect(redis), ...
    // end::values[]

    @AfterEach
    void close() {
        locks.close().block(STEP);
        config.close().block(STEP);
    }

    @Test
    void theRule() {
        // tag::rule[]
        boolean sameGrant = Fencing.admits(42, 42);     // true: the holder writing again
        boolean newer = Fencing.admits(42, 57);         // true, and 57 becomes the fence
        boolean stale = Fencing.admits(57, 42);         // false: a holder that lost its lease
        // end::rule[]
        assertThat(sameGrant).isTrue();
        assertThat(newer).isTrue();
        assertThat(stale).isFalse();
    }

    @Test
    void fencedWrites() {
        String json = "{\"rate\":3}";
        // tag::write[]
        Mono<Boolean> written = locks.withLock("config", lease ->
                config.write("config", lease.token(), json));   // false: a newer token has written
        Mono<FencedValue> current = config.read("config");       // the value and its fence; empty when none
        // end::write[]
        StepVerifier.create(written).expectNext(true).expectComplete().verify(STEP);
        StepVerifier.create(current).expectNextMatches(v -> v.value().equals(json)).expectComplete().verify(STEP);
    }

    @Test
    void aPausedHoldersLateWriteIsRefused() {
        Lease paused = locks.acquire("config").block(STEP);
        paused.release().block(STEP);                             // as if its lease had expired during a pause
        Lease next = locks.acquire("config").block(STEP);
        config.write("config", next.token(), "new").block(STEP);
        // tag::stale[]
        Mono<Boolean> late = config.write("config", paused.token(), "old");   // false: refused, nothing changed
        Mono<Boolean> gone = config.delete("config", paused.token());         // fenced too (a delete keeps the fence)
        // end::stale[]
        StepVerifier.create(late).expectNext(false).expectComplete().verify(STEP);
        StepVerifier.create(gone).expectNext(false).expectComplete().verify(STEP);
        assertThat(config.read("config").block(STEP)).isEqualTo(new FencedValue("new", next.token()));
        next.release().block(STEP);
    }
}
