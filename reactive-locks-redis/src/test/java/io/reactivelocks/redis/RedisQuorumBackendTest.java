package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** Quorum mode over three real redis-servers, with instances killed, paused and restarted empty. */
class RedisQuorumBackendTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration INSTANCE_TIMEOUT = Duration.ofMillis(300);

    private final List<RedisTestSupport> servers = new ArrayList<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private String prefix;

    @BeforeEach
    void startServers() {
        for (int i = 0; i < 3; i++) {
            servers.add(RedisTestSupport.start());
        }
        prefix = "rlq:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    @AfterEach
    void stopServers() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        for (RedisTestSupport s : servers) {
            s.close(); // kills paused and running servers alike
        }
    }

    private RedisLockBackend instance(int i) {
        RedisTestSupport s = servers.get(i);
        RedisLockBackend b = RedisLockBackend.create(s.client, s.options().mutate().keyPrefix(prefix).build());
        toClose.add(() -> b.close().block(STEP));
        return b;
    }

    private RedisQuorumBackend quorum() {
        RedisQuorumBackend q = RedisQuorumBackend.create(List.of(instance(0), instance(1), instance(2)), INSTANCE_TIMEOUT);
        toClose.add(() -> q.close().block(STEP));
        return q;
    }

    private LockClient client(LockOptions options) {
        LockClient c = LockClient.create(quorum(), options);
        toClose.add(() -> c.close().block(STEP));
        return c;
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(Duration.ofSeconds(3)).requestTimeout(Duration.ofSeconds(2)).build();
    }

    private static GrantRequest request(String name, String owner) {
        return new GrantRequest(name, owner, LEASE, true, LockClock.system());
    }

    private static String name(String p) {
        return p + "-" + UUID.randomUUID();
    }

    private void setCounter(int instance, String name, long value) {
        try (StatefulRedisConnection<String, String> c = servers.get(instance).connect()) {
            c.sync().set(new RedisKeys(prefix).fence(name), Long.toString(value));
        }
    }

    /**
     * An instance slower than the instance timeout: the quorum stops waiting for its release, but the release goes on
     * and close() waits for it — closing the instance's connection under it dropped it before (the loaded run s27 left
     * keys of cancelled acquires on one instance of RedisQuorumContractTest's three).
     */
    @Test
    void closeWaitsForAReleaseTheQuorumStoppedWaitingFor() {
        FaultProxy slow = FaultProxy.start(servers.get(2).server.host(), servers.get(2).server.port());
        toClose.add(slow::close);
        RedisTestSupport s = servers.get(2);
        RedisLockBackend behindProxy = RedisLockBackend.create(s.client, s.options().mutate().keyPrefix(prefix)
                .uri(io.lettuce.core.RedisURI.create("redis://" + slow.host() + ":" + slow.port())).build());
        RedisQuorumBackend q = RedisQuorumBackend.create(List.of(instance(0), instance(1), behindProxy), INSTANCE_TIMEOUT);
        String name = name("slow-release");
        String owner = GrantRequest.newOwner();
        assertThat(q.tryGrant(request(name, owner)).block(STEP)).isInstanceOf(Attempt.Granted.class);
        RedisLockBackend direct = instance(2);
        assertThat(direct.inspect(name).block(STEP)).as("the slow instance's key").isNotNull();

        slow.latency(INSTANCE_TIMEOUT.multipliedBy(3), Duration.ZERO);
        assertThat(q.release(name, owner).block(STEP)).as("released on the two fast instances").isTrue();
        q.close().block(STEP);
        StepVerifier.create(direct.inspect(name)).as("the slow instance's key after close").expectComplete().verify(STEP);
    }

    @Test
    void aGrantIsRatchetedOntoEveryInstanceAndReleasedEverywhere() {
        RedisQuorumBackend q = quorum();
        assertThat(q.quorum()).isEqualTo(2);
        String name = name("grant");
        String owner = GrantRequest.newOwner();
        setCounter(1, name, 8_000_000_000_000_000L); // one instance's counter far ahead of the others
        Attempt.Granted g = (Attempt.Granted) q.tryGrant(request(name, owner)).block(STEP);
        assertThat(g.token()).as("the maximum of the instances' tokens").isEqualTo(8_000_000_000_000_001L);
        for (RedisLockBackend i : q.instances()) {
            Holder h = i.inspect(name).block(STEP);
            assertThat(h.owner()).isEqualTo(owner);
            assertThat(h.token()).as("ratcheted lock value on %s", i).isEqualTo(g.token());
        }
        Holder h = q.inspect(name).block(STEP);
        assertThat(h.owner()).isEqualTo(owner);
        assertThat(h.token()).isEqualTo(g.token());
        assertThat(h.remaining()).isPositive().isLessThanOrEqualTo(LEASE);

        assertThat(q.release(name, "forged").block(STEP)).isFalse();
        assertThat(q.release(name, owner).block(STEP)).isTrue();
        for (RedisLockBackend i : q.instances()) {
            StepVerifier.create(i.inspect(name)).expectComplete().verify(STEP);
        }
    }

    @Test
    void theRatchetKeepsTokensMonotonicWhenTheInstanceThatGaveTheMaximumIsGone() {
        RedisQuorumBackend q = quorum();
        String name = name("ratchet");
        setCounter(2, name, 8_000_000_000_000_000L);
        String first = GrantRequest.newOwner();
        long t1 = ((Attempt.Granted) q.tryGrant(request(name, first)).block(STEP)).token();
        assertThat(t1).isEqualTo(8_000_000_000_000_001L);
        assertThat(q.release(name, first).block(STEP)).isTrue();

        servers.get(2).server.kill(); // the only instance whose own counter was that high
        String second = GrantRequest.newOwner();
        long t2 = ((Attempt.Granted) q.tryGrant(request(name, second)).block(STEP)).token();
        assertThat(t2).as("granted by instances 0 and 1, whose counters were ratcheted to t1").isGreaterThan(t1);
        assertThat(q.release(name, second).block(STEP)).isTrue();

        servers.get(2).server.restart(); // back, empty: its counter starts from its clock again
        servers.get(0).server.kill();
        String third = GrantRequest.newOwner();
        long t3 = await().atMost(STEP).ignoreExceptions().until(
                () -> ((Attempt.Granted) q.tryGrant(request(name, third)).block(STEP)).token(), t -> t > 0);
        assertThat(t3).as("granted by instances 1 (ratcheted to t2) and 2 (empty)").isGreaterThan(t2);
        assertThat(q.release(name, third).block(STEP)).isTrue();
    }

    @Test
    void tokensStayMonotonicWhenOneInstanceRestartsEmpty() {
        LockClient locks = client(options());
        String name = name("restart");
        long last = 0;
        for (int round = 0; round < 3; round++) {
            Lease lease = locks.acquire(name).block(STEP);
            assertThat(lease.token()).as("round %d", round).isGreaterThan(last);
            last = lease.token();
            lease.release().block(STEP);
            servers.get(round).server.kill();
            servers.get(round).server.restart();
        }
        Lease lease = await().atMost(STEP).ignoreExceptions().until(() -> locks.acquire(name).block(STEP), l -> l != null);
        assertThat(lease.token()).isGreaterThan(last);
        lease.release().block(STEP);
    }

    @Test
    void aMinorityKilledOrPausedDoesNotStopGrants() {
        LockClient locks = client(options());
        String name = name("minority");
        Lease first = locks.acquire(name).block(STEP);
        first.release().block(STEP);

        servers.get(2).server.kill();
        Lease second = locks.acquire(name).block(STEP);
        assertThat(second.token()).isGreaterThan(first.token());
        second.release().block(STEP);
        servers.get(2).server.restart();

        servers.get(0).server.pause();
        long t0 = System.nanoTime();
        Lease third = await().atMost(STEP).ignoreExceptions().until(() -> locks.tryAcquire(name).block(STEP), l -> l != null);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("a paused instance costs about the instance timeout")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(third.token()).isGreaterThan(second.token());
        third.release().block(STEP);
        servers.get(0).server.resume();
    }

    @Test
    void aMajorityDownIsATransientErrorWithinTheTimeoutAndLeavesNothingBehind() {
        RedisQuorumBackend q = quorum();
        String name = name("majority-down");
        servers.get(0).server.kill();
        servers.get(1).server.pause();
        String owner = GrantRequest.newOwner();
        long t0 = System.nanoTime();
        StepVerifier.create(q.tryGrant(request(name, owner)))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("majority");
                    assertThat(((LockBackendException) e).isTransient()).isTrue();
                })
                .verify(STEP);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
        StepVerifier.create(q.instances().get(2).inspect(name)).as("the minority grant was given back")
                .expectComplete().verify(STEP);
        servers.get(1).server.resume();
    }

    @Test
    void aSplitVoteIsBusyAndGivesBackWhatItGot() {
        RedisQuorumBackend q = quorum();
        String name = name("split");
        String holder = GrantRequest.newOwner();
        // another owner holds the lock on instances 0 and 1 only (granted and ratcheted as a quorum grant would be)
        long t0 = ((Attempt.Granted) q.instances().get(0).tryGrant(request(name, holder)).block(STEP)).token();
        long t1 = ((Attempt.Granted) q.instances().get(1).tryGrant(request(name, holder)).block(STEP)).token();
        assertThat(q.instances().get(0).ratchet(name, holder, Math.max(t0, t1)).block(STEP)).isTrue();
        assertThat(q.instances().get(1).ratchet(name, holder, Math.max(t0, t1)).block(STEP)).isTrue();
        String owner = GrantRequest.newOwner();
        Attempt a = q.tryGrant(request(name, owner)).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Busy.class);
        assertThat(((Attempt.Busy) a).holder().owner()).isEqualTo(holder);
        StepVerifier.create(q.instances().get(2).inspect(name)).as("instance 2's grant was given back")
                .expectComplete().verify(STEP);
        Holder h = q.inspect(name).block(STEP);
        assertThat(h.owner()).isEqualTo(holder);
        assertThat(h.token()).isEqualTo(Math.max(t0, t1));
        assertThat(q.release(name, holder).block(STEP)).isTrue();
    }

    @Test
    void aWaiterIsWokenByTheReleaseNotification() {
        LockOptions slow = options().mutate()
                .leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        LockClient a = client(slow);
        LockClient b = client(slow);
        String name = name("wake");
        Lease held = a.acquire(name).block(STEP);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiter = b.acquire(name).subscribe(got::set);
        try {
            String channel = new RedisKeys(prefix).channel(name);
            for (RedisTestSupport s : servers) {
                try (StatefulRedisConnection<String, String> c = s.connect()) {
                    await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 1L);
                }
            }
            assertThat(got.get()).isNull();
            held.release().block(STEP);
            await().atMost(Duration.ofSeconds(3)).until(() -> got.get() != null);
            assertThat(got.get().token()).isGreaterThan(held.token());
        } finally {
            waiter.dispose();
            if (got.get() != null) {
                got.get().release().block(STEP);
            }
        }
    }

    @Test
    void aHoldRenewsOnAMajorityAndEndsWhenTheMajorityIsLost() {
        LockOptions opts = LockOptions.builder().leaseTime(Duration.ofMillis(1500)).requestTimeout(Duration.ofSeconds(1)).build();
        LockClient locks = client(opts);
        String name = name("hold");
        List<Lease> updates = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicBoolean completed = new AtomicBoolean();
        Disposable hold = locks.hold(name).subscribe(updates::add, e -> { }, () -> completed.set(true));
        try {
            await().atMost(STEP).until(() -> updates.size() >= 2);
            servers.get(2).server.kill();
            int seen = updates.size();
            await().atMost(STEP).until(() -> updates.size() >= seen + 3);
            assertThat(completed).as("a minority down: still held").isFalse();
            servers.get(1).server.pause();
            await().atMost(STEP).untilTrue(completed);
            assertThat(updates.get(updates.size() - 1).isValid()).isFalse();
        } finally {
            hold.dispose();
            servers.get(1).server.resume();
        }
    }
}
