package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.fault.FaultProxy;
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
 * or new, gets the lock within a second of etcd answering — the old one although gRPC's own
 * reconnect backoff had grown to many seconds during the outage.
 */
class EtcdOutageTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** How long a first connection may take on a loaded machine. */
    private static final Duration CONNECT = Duration.ofSeconds(30);
    /** How soon after etcd is back the old client must get a lock. */
    private static final Duration RESUME = Duration.ofSeconds(5);
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

    private static EtcdLockOptions sessionOptions() {
        return etcd.options().mutate().sessionTtl(SESSION).build();
    }

    private LockClient client() {
        return client(etcd.backend(sessionOptions()));
    }

    private LockClient client(EtcdLockBackend backend) {
        LockClient c = LockClient.create(backend, OPTIONS);
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
        // the old client talks through a proxy, which counts its gRPC channel's connection attempts
        EtcdLockBackend oldBackend = etcd.proxiedBackend(sessionOptions());
        FaultProxy link = etcd.proxyOf(oldBackend);
        LockClient old = client(oldBackend);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            names.add("outage-" + i + "-" + UUID.randomUUID());
        }
        await().atMost(CONNECT).ignoreExceptions() // connected, session live (slow on a loaded machine)
                .until(() -> old.acquire(names.get(0)).flatMap(Lease::release).thenReturn(true).block(STEP));

        long connections = link.connectionsAccepted();
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
            // 7 connection attempts of the old client's channel since the kill: on gRPC's own backoff
            // (1 s growing by 1.6x, +-20 %: attempts at ~0, 1, 2.6, 5.2, 9.3, 15.8, 26.3 s) the next
            // one would come at least 13 s later (after ~42 s)
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> link.connectionsAccepted() >= connections + 7);
        } finally {
            etcd.server.restart();
        }
        long back = System.nanoTime(); // etcd is ready (the fixture's health probe answered)
        // the old client resumes within a bound, not when its gRPC backoff runs out (generous for a
        // loaded machine: it takes ~0.1-0.6 s, the backend reconnects every 500 ms while disconnected)
        String resume = "resume-" + UUID.randomUUID();
        await().atMost(RESUME).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                .until(() -> old.tryAcquire(resume).flatMap(l -> l.release().thenReturn(true)).defaultIfEmpty(false)
                        .block(Duration.ofSeconds(1)));
        Duration resumed = Duration.ofNanos(System.nanoTime() - back);
        System.out.println("etcd outage: the old client got a lock " + resumed.toMillis() + " ms after etcd was back ("
                + (link.connectionsAccepted() - connections) + " connection attempts since the kill)");
        assertThat(resumed).as("the old client got a lock %s after etcd was back", resumed).isLessThan(RESUME);
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
            for (String n : names) {
                assertThat(takes(old, n)).as("the old client takes %s within a second", n).isTrue();
            }
        } finally {
            probe.close().block(STEP);
        }
        assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty();
    }

    /**
     * A release whose delete was on the wire when the connection broke fails in the driver (after
     * the engine gave up on it at its request timeout); the client's session outlives the break,
     * so the delete must be sent again once etcd answers — else the key blocks the name for as
     * long as the client lives.
     */
    @Test
    void aReleaseCutOffInFlightIsSentAgainOnceEtcdAnswers() {
        EtcdLockBackend oldBackend = etcd.proxiedBackend(sessionOptions());
        FaultProxy link = etcd.proxyOf(oldBackend);
        LockClient old = client(oldBackend);
        String name = "cut-off-release-" + UUID.randomUUID();
        Lease held = await().atMost(CONNECT).ignoreExceptions() // connected, session live (slow on a loaded machine)
                .until(() -> old.acquire(name).block(STEP), l -> l != null);
        link.blackhole(); // the release's delete goes out, and no answer comes back
        try {
            StepVerifier.create(held.release())
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class))
                    .verify(STEP);
            link.cutConnections(); // the connection breaks with the delete in flight
        } finally {
            link.heal();
        }
        LockClient other = client();
        await().atMost(STEP).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> other.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).defaultIfEmpty(false)
                        .block(Duration.ofSeconds(1)));
        await().atMost(STEP).untilAsserted(() -> assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty());
        // that release's first delete was unguarded and its answer was lost (a copy could still run late): its slot is
        // retired, so the backend's next owner of the name takes the next slot's key, not the one that delete names
        Lease again = await().atMost(STEP).ignoreExceptions().until(() -> old.acquire(name).block(STEP), l -> l != null);
        assertThat(etcd.keys()).as("the new owner's key").singleElement().asString().endsWith("-1");
        again.release().block(STEP);
        await().atMost(STEP).untilAsserted(() -> assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty());
        // a release answered frees its slot: the next owner takes that slot again
        Lease third = old.acquire(name).block(STEP);
        assertThat(etcd.keys()).as("the next owner's key").singleElement().asString().endsWith("-1");
        third.release().block(STEP);
    }
}
