package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockOptions;
import io.reactivelocks.etcd.EtcdConnectionOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.test.server.EtcdServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/stores/etcd.md, run against a real etcd. */
class DocsEtcdTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private static EtcdServer server;
    private static String etcdUrl;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
        etcdUrl = server.url();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void quickStart() {
        // tag::quick-start[]
        Client etcd = Client.builder().endpoints(etcdUrl).build();   // e.g. "http://localhost:2379"; a cluster: every member
        LockStore store = EtcdLocks.connect(etcd);                 // one session over the client; nothing sent before first use
        LockClient locks = store.locks();                          // ... and every other concept: store.semaphores(...), ...

        Mono<String> receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        Flux<Lease> held = locks.hold("scheduler");                // completes when the session is lost
        // end::quick-start[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        StepVerifier.create(held.take(1)).expectNextCount(1).expectComplete().verify(STEP);
        store.close().block(STEP);
        etcd.close();
    }

    @Test
    void optionsAndOwnClient() {
        // tag::connect[]
        EtcdConnectionOptions connection = EtcdConnectionOptions.builder()
                .endpoints(etcdUrl)                                // every member's client URL
                .build();                                          // .user(..), .trustCertificates(..), .clientCertificate(..)
        LockStore store = EtcdLocks.connect(connection,            // its own jetcd client, closed with the session
                EtcdLockOptions.builder().prefix("myapp/locks").sessionTtl(Duration.ofSeconds(10)).build());
        LockClient locks = store.locks(LockOptions.defaults());
        // end::connect[]
        Lease lease = locks.acquire("order:42").block(STEP);
        assertThat(lease.token()).isPositive();
        lease.release().block(STEP);
        store.close().block(STEP);
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
