package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.local.LocalReadWriteStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/read-write-lock.md, run on the in-memory read-write store. */
class DocsReadWriteLockTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    ReadWriteLock catalog = ReadWriteLock.create(new LocalReadWriteStore());   // store.readWriteLocks(options), ...
    // end::create[]

    @AfterEach
    void close() {
        catalog.close().block(STEP);
    }

    @Test
    void readersShareWritersExclude() {
        // tag::use[]
        Mono<String> read = catalog.withReadLock("catalog", lease -> readCatalog());               // shared with other readers
        Mono<String> rebuilt = catalog.withWriteLock("catalog", lease -> rebuild(lease.token()));  // alone: no reader, no writer
        Mono<Lease> reader = catalog.read().tryAcquire("catalog");      // empty while a writer holds (or waits)
        Flux<Lease> writer = catalog.write().hold("catalog");           // the grant, again after each renewal; completes when lost
        Flux<ReadWriteState> state = catalog.observe("catalog");        // readers, writer, waiting writers
        Mono<ReadWriteState> now = catalog.inspect("catalog");          // the same, read once; catalog.metrics(): what this client holds
        // end::use[]
        StepVerifier.create(read).expectNext("catalog v1").expectComplete().verify(STEP);
        StepVerifier.create(rebuilt).expectNextMatches(r -> r.startsWith("rebuilt with fence ")).expectComplete().verify(STEP);
        Lease r1 = reader.block(STEP);
        Lease r2 = reader.block(STEP);
        StepVerifier.create(state.take(1)).expectNextMatches(s -> s.readers().size() == 2 && s.writer() == null)
                .expectComplete().verify(STEP);
        StepVerifier.create(writer.take(1))
                .then(() -> {
                    r1.release().block(STEP);
                    r2.release().block(STEP);
                })
                .expectNextMatches(w -> w.token() > r2.token())
                .expectComplete()
                .verify(STEP);
    }

    @Test
    void readersFirst() {
        LockOptions options = LockOptions.defaults();
        // tag::readers-first[]
        ReadWriteLock readersFirst = ReadWriteLock.create(new LocalReadWriteStore(),
                ReadWriteLockOptions.of(options).withPreference(ReadWriteLockOptions.Preference.READERS));
        // end::readers-first[]
        assertThat(readersFirst.options().preference()).isEqualTo(ReadWriteLockOptions.Preference.READERS);
        readersFirst.close().block(STEP);
    }

    static Mono<String> readCatalog() {
        return Mono.just("catalog v1");
    }

    static Mono<String> rebuild(long token) {
        return Mono.fromSupplier(() -> "rebuilt with fence " + token);
    }
}
