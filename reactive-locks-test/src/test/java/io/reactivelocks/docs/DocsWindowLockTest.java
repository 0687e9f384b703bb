package io.reactivelocks.docs;

import io.reactivelocks.local.LocalWindowStore;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/window-lock.md, run on the in-memory window store. */
class DocsWindowLockTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    WindowLock hourly = WindowLock.create(new LocalWindowStore());   // on a server: store.windowLocks(options), from the
                                                                   // session RedisLocks.connect(redis), PostgresLocks.connect(db), ...
    // end::create[]

    @AfterEach
    void close() {
        hourly.close().block(STEP);
    }

    @Test
    void oncePerHour() {
        // tag::use[]
        Mono<String> report = hourly.tryClaim("report", Duration.ofHours(1))   // empty: someone sent it this hour
                .flatMap(claim -> sendReport(claim.window(), claim.token()))
                .defaultIfEmpty("already sent this hour");
        // end::use[]
        StepVerifier.create(report).expectNextMatches(r -> r.startsWith("sent the report of hour ")).expectComplete().verify(STEP);
        StepVerifier.create(report).expectNext("already sent this hour").expectComplete().verify(STEP);
    }

    static Mono<String> sendReport(long window, long token) {
        return Mono.fromSupplier(() -> "sent the report of hour " + window + " with fence " + token);
    }
}
