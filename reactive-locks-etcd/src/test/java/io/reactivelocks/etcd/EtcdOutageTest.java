package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * etcd goes down and comes back while a client with a long-lived session keeps trying: its
 * acquires fail with a transient error during the outage, and the requests they abandoned at
 * their timeout — which the driver sends once etcd answers again — must not take the lock on the
 * client's session, which outlives the outage. Afterwards nothing is left and every client, old
 * or new, gets the lock within a second of etcd answering.
 */
class EtcdOutageTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** Long: a key left on the session would hold the lock long after the outage. */
    private static final Duration SESSION = Duration.ofSeconds(30);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(SESSION)
            .requestTimeout(Duration.ofSeconds(1))
            .waitTimeout(Duration.ofSeconds(3)) // several attempts, each failing at its request timeout
            .build();

    private static EtcdTestSupport etcd;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start(); // its own server: this class kills it
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void closeClients() {
        for (LockClient c : clients) {
            c.close().onErrorResume(e -> Mono.empty()).block(STEP);
        }
        clients.clear();
    }

    private LockClient client() {
        LockClient c = LockClient.create(etcd.backend(etcd.options().mutate().sessionTtl(SESSION).build()), OPTIONS);
        clients.add(c);
        return c;
    }

    /** @return whether {@code c} got (and released) {@code name} within a second */
    private static boolean takes(LockClient c, String name) {
        try {
            await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> c.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).defaultIfEmpty(false)
                            .block(Duration.ofSeconds(1)));
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }

    @Test
    void requestsAbandonedDuringAnOutageTakeNoLockWhenEtcdIsBack() {
        LockClient old = client();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            names.add("outage-" + i + "-" + UUID.randomUUID());
        }
        await().atMost(STEP).ignoreExceptions() // connected, session live (slow on a loaded machine)
                .until(() -> old.acquire(names.get(0)).flatMap(Lease::release).thenReturn(true).block(STEP));

        etcd.server.kill();
        try {
            for (String n : names) {
                StepVerifier.create(old.acquire(n))
                        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                                .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isTrue()))
                        .verify(STEP);
                if (n.equals(names.get(0))) {
                    StepVerifier.create(old.tryAcquire(n)).expectError(LockException.class).verify(STEP);
                }
            }
        } finally {
            etcd.server.restart();
        }
        // etcd answers again (a raw read through a fresh client)
        EtcdLockBackend probe = etcd.backend();
        try {
            await().atMost(STEP).ignoreExceptions()
                    .until(() -> probe.inspect("probe").map(h -> true).defaultIfEmpty(true).block(Duration.ofSeconds(1)));
            LockClient fresh = client();
            for (String n : names) {
                assertThat(takes(fresh, n)).as("a new client takes %s within a second of etcd answering", n).isTrue();
            }
            assertThat(Flux.fromIterable(names).flatMap(probe::inspect).collectList().block(STEP))
                    .as("holders left after the outage").isEmpty();
            // the old client's gRPC channel reconnects on its own backoff (grpc-java: 1 s growing by
            // 1.6x while etcd was down), which the lock client cannot shorten; once it answers, every
            // name is free for it too
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> old.tryAcquire("reconnected-" + UUID.randomUUID()).flatMap(l -> l.release().thenReturn(true))
                            .defaultIfEmpty(false).block(Duration.ofSeconds(1)));
            for (String n : names) {
                assertThat(takes(old, n)).as("the old client takes %s within a second of its reconnection", n).isTrue();
            }
        } finally {
            probe.close().block(STEP);
        }
        assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty();
    }
}
