package io.reactivelocks.docs;

import io.reactivelocks.LockClient;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

// tag::fair-lock[]
@Service
public class Ledger {
    private final LockClient jobs;                                 // the FIFO client, beside the mutex client

    public Ledger(@Qualifier("reactiveLocksFairLock") LockClient jobs) {
        this.jobs = jobs;
    }

    public Mono<Long> post(String entry) {
        return jobs.withLock("ledger", lease -> Mono.just(lease.token()));   // waiters are served in arrival order
    }
}
// end::fair-lock[]
