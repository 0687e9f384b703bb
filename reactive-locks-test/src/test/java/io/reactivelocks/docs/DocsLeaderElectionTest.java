package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockClient;
import io.reactivelocks.election.Leader;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.local.LocalLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/leader-election.md, run on the in-memory store. */
class DocsLeaderElectionTest {

    static final Duration STEP = Duration.ofSeconds(10);

    LockClient locks = LocalLockBackend.client();
    private final List<String> log = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        locks.close().block(STEP);
    }

    @Test
    void campaignLeadObserve() {
        // tag::campaign[]
        LeaderElection elections = LeaderElection.create(locks);   // on any LockClient, any store
        Disposable candidate = elections.campaign("scheduler", "node-1:8080")   // elected, then again after each renewal
                .distinctUntilChanged(Leadership::token)            // one element per term
                .concatMap(term -> runScheduler(term.token())       // the token fences the leader's writes
                        .takeUntilOther(term.lost()))               // stop when leadership is lost
                .repeat()                                           // then campaign again
                .subscribe();                                       // dispose() resigns, or leaves the line
        // end::campaign[]
        // tag::leader[]
        Mono<Leader> leader = elections.leader("scheduler");                 // name, value, owner, token; empty if nobody leads
        Flux<Optional<Leader>> leaders = elections.observe("scheduler");     // the current leader, then each change
        // end::leader[]
        await().atMost(STEP).until(() -> !log.isEmpty());
        assertThat(leader.block(STEP).value()).isEqualTo("node-1:8080");
        StepVerifier.create(leaders.take(2))
                .expectNextMatches(l -> l.map(Leader::value).equals(Optional.of("node-1:8080")))
                .then(candidate::dispose)
                .expectNext(Optional.empty())
                .expectComplete()
                .verify(STEP);
        assertThat(log).singleElement().asString().startsWith("scheduling with fence ");
    }

    @Test
    void proclaimAndResign() {
        LeaderElection elections = LeaderElection.create(locks);
        // tag::proclaim[]
        Flux<String> term = elections.campaign("scheduler", "node-1:8080")
                .concatMap(lead -> lead.proclaim("node-1:8080 draining")     // a new value while leading
                        .then(elections.leader("scheduler"))                 // what everyone reads now
                        .flatMap(now -> lead.resign().thenReturn(now.value())));   // hand over: the campaign completes
        // end::proclaim[]
        StepVerifier.create(term).expectNext("node-1:8080 draining").expectComplete().verify(STEP);
        StepVerifier.create(elections.leader("scheduler")).expectComplete().verify(STEP);
    }

    private Flux<Void> runScheduler(long token) {
        return Flux.defer(() -> {
            log.add("scheduling with fence " + token);
            return Flux.never();
        });
    }
}
