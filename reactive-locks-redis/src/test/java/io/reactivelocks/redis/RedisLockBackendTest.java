package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The Redis backend through its SPI, against a real redis-server. */
class RedisLockBackendTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(30);

    private static RedisTestSupport redis;
    private final List<RedisLockBackend> backends = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        redis = RedisTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeBackendsAndCheckNoLockKeysLeft() {
        for (RedisLockBackend b : backends) {
            b.close().block(STEP);
        }
        // counters (":fence") and window keys stay by design, with a TTL; lock keys must all be gone
        assertThat(redis.scanKeys()).as("lock keys left under %s", redis.prefix)
                .noneMatch(k -> k.endsWith(":lock"));
    }

    private RedisLockBackend backend() {
        RedisLockBackend b = redis.backend();
        backends.add(b);
        return b;
    }

    private static GrantRequest request(String name, String owner, Duration lease) {
        return new GrantRequest(name, owner, lease, true, LockClock.system());
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @Test
    void grantBusyReleaseAndInspect() {
        RedisLockBackend b = backend();
        String name = name("grant");
        String a = GrantRequest.newOwner();
        String other = GrantRequest.newOwner();

        StepVerifier.create(b.inspect(name)).expectComplete().verify(STEP);
        long before = System.nanoTime();
        Attempt first = b.tryGrant(request(name, a, LEASE)).block(STEP);
        long after = System.nanoTime();
        assertThat(first).isInstanceOf(Attempt.Granted.class);
        Attempt.Granted g = (Attempt.Granted) first;
        assertThat(g.ttl()).isEqualTo(LEASE);
        assertThat(g.validFromNanos()).as("timed from when the script was sent").isBetween(before, after);

        Attempt busy = b.tryGrant(request(name, other, LEASE)).block(STEP);
        assertThat(busy).isInstanceOf(Attempt.Busy.class);
        Holder h = ((Attempt.Busy) busy).holder();
        assertThat(h.owner()).isEqualTo(a);
        assertThat(h.token()).isEqualTo(g.token());
        assertThat(h.remaining()).isPositive().isLessThanOrEqualTo(LEASE);

        Holder inspected = b.inspect(name).block(STEP);
        assertThat(inspected.owner()).isEqualTo(a);
        assertThat(inspected.token()).isEqualTo(g.token());
        assertThat(inspected.remaining()).isPositive().isLessThanOrEqualTo(LEASE);

        assertThat(b.release(name, other).block(STEP)).as("release by another owner").isFalse();
        assertThat(b.release(name, a).block(STEP)).isTrue();
        assertThat(b.release(name, a).block(STEP)).as("second release").isFalse();
        StepVerifier.create(b.inspect(name)).expectComplete().verify(STEP);
    }

    @Test
    void theSameOwnerAskingAgainIsGrantedTheSameToken() {
        RedisLockBackend b = backend();
        String name = name("idempotent");
        String a = GrantRequest.newOwner();
        Attempt.Granted first = (Attempt.Granted) b.tryGrant(request(name, a, Duration.ofSeconds(5))).block(STEP);
        Attempt.Granted again = (Attempt.Granted) b.tryGrant(request(name, a, LEASE)).block(STEP);
        assertThat(again.token()).isEqualTo(first.token());
        assertThat(b.inspect(name).block(STEP).remaining()).as("TTL set again to the new lease")
                .isGreaterThan(Duration.ofSeconds(5));
        assertThat(b.release(name, a).block(STEP)).isTrue();
    }

    @Test
    void tokensStrictlyIncreaseAcrossHoldersAndAreAtLeastTheServerClockInMicroseconds() {
        RedisLockBackend b = backend();
        String name = name("tokens");
        long serverMicrosBefore;
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            List<String> t = c.sync().time();
            serverMicrosBefore = Long.parseLong(t.get(0)) * 1_000_000L + Long.parseLong(t.get(1));
        }
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 50; i++) {
            String owner = GrantRequest.newOwner();
            Attempt.Granted g = (Attempt.Granted) b.tryGrant(request(name, owner, LEASE)).block(STEP);
            assertThat(g.token()).as("token %d", i).isGreaterThan(last).isGreaterThanOrEqualTo(serverMicrosBefore);
            last = g.token();
            assertThat(b.release(name, owner).block(STEP)).isTrue();
        }
    }

    @Test
    void tokensStayMonotonicWhenTheCounterRunsAheadOfTheClock() {
        RedisLockBackend b = backend();
        String name = name("ahead");
        long ahead = 9_000_000_000_000_000L; // far beyond any clock in µs, still below 2^53
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            c.sync().set(b.keys().fence(name), Long.toString(ahead));
        }
        String owner = GrantRequest.newOwner();
        Attempt.Granted g = (Attempt.Granted) b.tryGrant(request(name, owner, LEASE)).block(STEP);
        assertThat(g.token()).isEqualTo(ahead + 1);
        assertThat(b.release(name, owner).block(STEP)).isTrue();
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            assertThat(c.sync().pttl(b.keys().fence(name))).as("the counter carries its long TTL")
                    .isGreaterThan(Duration.ofDays(29).toMillis());
        }
    }

    @Test
    void renewIsOwnerAndTokenCheckedPerLeaseInOneBatch() {
        RedisLockBackend b = backend();
        List<RenewRequest> batch = new ArrayList<>();
        List<Boolean> expected = new ArrayList<>();
        Map<String, String> granted = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            String name = name("renew" + i);
            String owner = GrantRequest.newOwner();
            Attempt.Granted g = (Attempt.Granted) b.tryGrant(request(name, owner, Duration.ofSeconds(5))).block(STEP);
            granted.put(name, owner);
            switch (i % 4) {
                case 0 -> { batch.add(new RenewRequest(new HeldLock(name, owner, g.token()), LEASE)); expected.add(true); }
                case 1 -> { batch.add(new RenewRequest(new HeldLock(name, "forged", g.token()), LEASE)); expected.add(false); }
                case 2 -> { batch.add(new RenewRequest(new HeldLock(name, owner, g.token() - 1), LEASE)); expected.add(false); }
                default -> { batch.add(new RenewRequest(new HeldLock(name("never-held"), owner, g.token()), LEASE)); expected.add(false); }
            }
        }
        List<RenewOutcome> outcomes = b.renew(batch).block(STEP);
        assertThat(outcomes).extracting(RenewOutcome::renewed).containsExactlyElementsOf(expected);
        for (int i = 0; i < batch.size(); i++) {
            RenewRequest r = batch.get(i);
            Holder h = b.inspect(r.lock().name()).block(STEP);
            if (expected.get(i)) {
                assertThat(outcomes.get(i).ttl()).isEqualTo(LEASE);
                assertThat(h.remaining()).as("renewed to the new lease").isGreaterThan(Duration.ofSeconds(5));
            } else if (h != null) {
                assertThat(h.remaining()).as("not renewed").isLessThanOrEqualTo(Duration.ofSeconds(5));
            }
        }
        granted.forEach((name, owner) -> assertThat(b.release(name, owner).block(STEP)).isTrue());
    }

    @Test
    void aRenewalBatchOf100LeasesIsOneScriptCallOnAStandaloneServer() {
        RedisLockBackend b = backend();
        List<RenewRequest> batch = grantMany(b, "batch", 100);
        b.renew(batch.subList(0, 1)).block(STEP); // the script is cached on the server from here on
        long before = scriptCalls();
        List<RenewOutcome> outcomes = b.renew(batch).block(STEP);
        assertThat(scriptCalls() - before).as("EVALSHA/EVAL calls for one batch of 100").isEqualTo(1);
        assertThat(outcomes).hasSize(100).allMatch(RenewOutcome::renewed);
        batch.forEach(r -> assertThat(b.release(r.lock().name(), r.lock().owner()).block(STEP)).isTrue());
    }

    @Test
    void aLargeRenewalBatchIsSplitIntoCappedScriptCallsThatAllRenew() {
        RedisLockBackend b = backend();
        int n = 2 * RedisLockBackend.MAX_RENEWALS_PER_CALL + 88;
        List<RenewRequest> batch = grantMany(b, "capped", n);
        b.renew(batch.subList(0, 1)).block(STEP);
        long before = scriptCalls();
        List<RenewOutcome> outcomes = b.renew(batch).block(STEP);
        assertThat(scriptCalls() - before).as("script calls for a batch of " + n + ", at most "
                + RedisLockBackend.MAX_RENEWALS_PER_CALL + " keys each").isEqualTo(3);
        assertThat(outcomes).hasSize(n).allMatch(RenewOutcome::renewed);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            for (RenewRequest r : List.of(batch.get(0), batch.get(n / 2), batch.get(n - 1))) {
                assertThat(c.sync().pttl(b.keys().lock(r.lock().name()))).as("renewed to the lease time, not the grant's 5 s")
                        .isGreaterThan(Duration.ofSeconds(5).toMillis());
            }
        }
        batch.forEach(r -> assertThat(b.release(r.lock().name(), r.lock().owner()).block(STEP)).isTrue());
    }

    @Test
    void clusterSafeBatchesMakeOneScriptCallPerHashSlot() {
        RedisLockBackend b = RedisLockBackend.create(redis.client, redis.options().mutate().clusterSafeBatches(true).build());
        backends.add(b);
        assertThat(b.options().clusterSafeBatches()).isTrue();
        assertThat(RedisLockOptions.defaults().clusterSafeBatches()).as("off by default").isFalse();
        List<RenewRequest> batch = grantMany(b, "slots", 100);
        long slots = batch.stream()
                .map(r -> io.lettuce.core.cluster.SlotHash.getSlot(RedisKeys.bytes(b.keys().lock(r.lock().name()))))
                .distinct().count();
        b.renew(batch.subList(0, 1)).block(STEP);
        long before = scriptCalls();
        List<RenewOutcome> outcomes = b.renew(batch).block(STEP);
        assertThat(scriptCalls() - before).as("one call per slot").isEqualTo(slots);
        assertThat(outcomes).hasSize(100).allMatch(RenewOutcome::renewed);
        batch.forEach(r -> assertThat(b.release(r.lock().name(), r.lock().owner()).block(STEP)).isTrue());
    }

    @Test
    void aRenewalBatchOfMixedLeaseTimesNamesOwnersAndPayloadsRenewsEachToItsOwnLeaseAfterAScriptFlush() {
        RedisLockBackend b = backend();
        // names the key encoding escapes, an owner outside ASCII, a grant with a payload, two lease times
        String[] names = {name("plain"), name("with space {braces} é ✓"), name("payload"), name("long lease")};
        String[] owners = {GrantRequest.newOwner(), "owner-é-" + UUID.randomUUID(), GrantRequest.newOwner(), GrantRequest.newOwner()};
        Duration[] leases = {LEASE, LEASE, LEASE, Duration.ofSeconds(120)};
        List<RenewRequest> batch = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            GrantRequest g = new GrantRequest(names[i], owners[i], Duration.ofSeconds(5), true, LockClock.system(),
                    i == 2 ? "some payload" : null);
            long token = ((Attempt.Granted) b.tryGrant(g).block(STEP)).token();
            batch.add(new RenewRequest(new HeldLock(names[i], owners[i], token), leases[i]));
        }
        batch.add(new RenewRequest(new HeldLock(names[1], "owner-é-forged", batch.get(1).lock().token()), LEASE));
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            c.sync().scriptFlush(); // the first renewal falls back to EVAL
            List<RenewOutcome> outcomes = b.renew(batch).block(STEP);
            assertThat(outcomes).extracting(RenewOutcome::renewed).containsExactly(true, true, true, true, false);
            assertThat(c.sync().scriptExists(LuaScript.RENEW.sha())).as("cached again by EVAL").containsExactly(true);
            for (int i = 0; i < names.length; i++) {
                long ttl = c.sync().pttl(b.keys().lock(names[i]));
                assertThat(ttl).as("TTL of %s", names[i])
                        .isGreaterThan(leases[i].toMillis() - 10_000).isLessThanOrEqualTo(leases[i].toMillis());
            }
            assertThat(b.inspect(names[2]).block(STEP).payload()).as("payload kept").isEqualTo("some payload");
            assertThat(b.renew(batch).block(STEP)).extracting(RenewOutcome::renewed)
                    .as("again, by EVALSHA").containsExactly(true, true, true, true, false);
        }
        for (int i = 0; i < names.length; i++) {
            assertThat(b.release(names[i], owners[i]).block(STEP)).isTrue();
        }
        assertThat(b.renew(batch).block(STEP)).extracting(RenewOutcome::renewed).as("released: lost")
                .containsOnly(false);
    }

    private static List<RenewRequest> grantMany(RedisLockBackend b, String prefix, int n) {
        return Flux.range(0, n)
                .flatMapSequential(i -> {
                    String name = name(prefix + i);
                    String owner = GrantRequest.newOwner();
                    return b.tryGrant(request(name, owner, Duration.ofSeconds(5)))
                            .map(a -> new RenewRequest(new HeldLock(name, owner, ((Attempt.Granted) a).token()), LEASE));
                })
                .collectList()
                .block(STEP);
    }

    /** @return how many EVALSHA and EVAL commands the server has run so far ({@code INFO commandstats}) */
    private static long scriptCalls() {
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            long calls = 0;
            for (String line : c.sync().info("commandstats").split("\r?\n")) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    String v = line.substring(line.indexOf("calls=") + "calls=".length());
                    calls += Long.parseLong(v.substring(0, v.indexOf(',')));
                }
            }
            return calls;
        }
    }

    @Test
    void anEmptyRenewBatchAnswersAnEmptyList() {
        assertThat(backend().renew(List.of()).block(STEP)).isEmpty();
    }

    @Test
    void eventsStartWithSubscribedThenCarryAcquiredAndReleased() {
        RedisLockBackend watcher = backend();
        RedisLockBackend actor = backend();
        String name = name("events");
        String owner = GrantRequest.newOwner();
        java.util.concurrent.atomic.AtomicLong token = new java.util.concurrent.atomic.AtomicLong();
        StepVerifier.create(watcher.events(name))
                .expectNext(new LockEvent.Subscribed(name))
                .then(() -> actor.tryGrant(request(name, owner, LEASE))
                        .subscribe(a -> token.set(((Attempt.Granted) a).token())))
                .assertNext(e -> {
                    assertThat(e).isInstanceOf(LockEvent.Acquired.class);
                    LockEvent.Acquired acq = (LockEvent.Acquired) e;
                    assertThat(acq.name()).isEqualTo(name);
                    assertThat(acq.owner()).isEqualTo(owner);
                    assertThat(acq.token()).isPositive();
                })
                .then(() -> actor.release(name, owner).subscribe())
                .expectNext(new LockEvent.Released(name, owner, false))
                .thenCancel()
                .verify(STEP);
        // the grant's answer comes on the actor's connection, the events on the watcher's: either may be first
        await().atMost(STEP).until(() -> token.get() > 0);
    }

    @Test
    void aWaiterWokenByAReleaseIsGrantedOnThePubSubThreadAndReleasesFromThere() {
        wakeGrantAndReleaseFromTheEventThread(backend(), true);
    }

    @Test
    void overRespTwoTheWokenWaitersRequestsGoToTheCommandConnection() {
        // a RESP2 connection refuses commands while subscribed: the backend must not send them there
        io.lettuce.core.RedisClient resp2 = io.lettuce.core.RedisClient.create(redis.resources, redis.uri);
        resp2.setOptions(io.lettuce.core.ClientOptions.builder()
                .protocolVersion(io.lettuce.core.protocol.ProtocolVersion.RESP2).build());
        RedisLockBackend b = RedisLockBackend.create(resp2, redis.options());
        try {
            wakeGrantAndReleaseFromTheEventThread(b, false);
        } finally {
            b.close().block(STEP);
            resp2.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * Holds a lock, waits on its events, releases it; on the Released event (on the pub/sub
     * connection's thread) asks for the lock with another owner and, once granted, releases it
     * from the thread the grant came on.
     */
    private void wakeGrantAndReleaseFromTheEventThread(RedisLockBackend b, boolean sameThread) {
        String name = name("inline");
        String holder = GrantRequest.newOwner();
        String waiter = GrantRequest.newOwner();
        assertThat(b.tryGrant(request(name, holder, LEASE)).block(STEP)).isInstanceOf(Attempt.Granted.class);
        java.util.concurrent.atomic.AtomicReference<Thread> eventThread = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Thread> grantThread = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Object> outcome = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean live = new java.util.concurrent.atomic.AtomicBoolean();
        reactor.core.Disposable events = b.events(name).subscribe(e -> {
            if (e instanceof LockEvent.Subscribed) {
                live.set(true);
            } else if (e instanceof LockEvent.Released r && r.owner().equals(holder)) {
                eventThread.set(Thread.currentThread());
                b.tryGrant(request(name, waiter, LEASE)).subscribe(a -> {
                    grantThread.set(Thread.currentThread());
                    if (a instanceof Attempt.Granted) {
                        b.release(name, waiter).subscribe(outcome::set, outcome::set);
                    } else {
                        outcome.set(a);
                    }
                }, outcome::set);
            }
        });
        try {
            // released once the subscription is live, from this thread: the Released message then comes on
            // the pub/sub connection's thread (released from inside the Subscribed callback, one CI run saw it
            // delivered on the subscribing thread, which was still handing out events)
            await().atMost(STEP).untilTrue(live);
            b.release(name, holder).subscribe(null, outcome::set);
            await().atMost(STEP).until(() -> outcome.get() != null);
            assertThat(outcome.get()).as("the woken waiter's grant, then its release").isEqualTo(Boolean.TRUE);
            if (sameThread) {
                assertThat(grantThread.get()).as("the grant is answered on the thread that woke the waiter")
                        .isSameAs(eventThread.get());
            }
            assertThat(b.inspect(name).blockOptional(STEP)).isEmpty();
        } finally {
            events.dispose();
        }
    }

    @Test
    void oneSubscribePerNameSharedByAllSubscribersAndDroppedByTheLast() {
        RedisLockBackend watcher = backend();
        RedisLockBackend actor = backend();
        String name = name("shared");
        String channel = watcher.keys().channel(name);
        List<LockEvent> first = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<LockEvent> second = new java.util.concurrent.CopyOnWriteArrayList<>();
        var d1 = watcher.events(name).subscribe(first::add);
        var d2 = watcher.events(name).subscribe(second::add);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> first.size() == 1 && second.size() == 1);
            assertThat(first).containsExactly(new LockEvent.Subscribed(name));
            assertThat(second).containsExactly(new LockEvent.Subscribed(name));
            Map<String, Long> subs = c.sync().pubsubNumsub(channel);
            assertThat(subs.get(channel)).as("server-side subscriptions of the channel").isEqualTo(1L);

            String owner = GrantRequest.newOwner();
            actor.tryGrant(request(name, owner, LEASE)).block(STEP);
            actor.release(name, owner).block(STEP);
            await().atMost(STEP).until(() -> first.size() == 3 && second.size() == 3);
            assertThat(second).isEqualTo(first);

            d1.dispose();
            assertThat(c.sync().pubsubNumsub(channel).get(channel)).as("still one subscriber left").isEqualTo(1L);
            d2.dispose();
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 0L);
            assertThat(c.sync().pubsubChannels(channel)).as("channels of this name subscribed on the server").isEmpty();
            String grants = watcher.keys().grantsChannel(name);
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(grants).get(grants) == 0L);

            // the channel was forgotten, not left half-unsubscribed: a later subscriber subscribes on the server
            // again and hears the lock's events
            String later = GrantRequest.newOwner();
            StepVerifier.create(watcher.events(name))
                    .expectNext(new LockEvent.Subscribed(name))
                    .then(() -> assertThat(c.sync().pubsubNumsub(channel).get(channel))
                            .as("server-side subscriptions after a new subscriber").isEqualTo(1L))
                    .then(() -> actor.tryGrant(request(name, later, LEASE)).block(STEP))
                    .expectNextMatches(e -> e instanceof LockEvent.Acquired a && later.equals(a.owner()))
                    .then(() -> actor.release(name, later).block(STEP))
                    .expectNext(new LockEvent.Released(name, later, false))
                    .thenCancel()
                    .verify(STEP);
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 0L);
        } finally {
            d1.dispose();
            d2.dispose();
        }
    }

    /**
     * A waiter's stream ({@code wakeUps}) subscribes the lock's channel alone: a grant's {@code PUBLISH} goes to the
     * grants channel, which only observers ({@code events}) subscribe to.
     */
    @Test
    void aWaitersStreamHearsReleasesOnlyAndAnObserversAlsoGrants() {
        RedisLockBackend watcher = backend();
        RedisLockBackend actor = backend();
        String name = name("wakeups");
        grantsReachObserversOnly(name, watcher::wakeUps, watcher::events, watcher.keys().channel(name),
                watcher.keys().grantsChannel(name),
                owner -> ((Attempt.Granted) actor.tryGrant(request(name, owner, LEASE)).block(STEP)).token(),
                owner -> actor.release(name, owner).block(STEP));
    }

    /**
     * As a lock's: a semaphore's or read-write lock's waiters ({@code wakeUps}) subscribe its channel alone, and its
     * grants are published on a channel that only observers ({@code events}) subscribe to (issue 30: a waiting client
     * received every grant's message and dropped it).
     */
    @Test
    void aSemaphoresAndReadWriteLocksWaitersHearReleasesOnlyAndObserversAlsoGrants() {
        RedisLockBackend watcher = backend();
        RedisLockBackend actor = backend();
        RedisSemaphoreStore permits = new RedisSemaphoreStore(actor, false);
        RedisReadWriteStore rw = new RedisReadWriteStore(actor, false);
        String sem = name("sem-wakeups");
        RedisSemaphoreStore semWatcher = new RedisSemaphoreStore(watcher, false);
        grantsReachObserversOnly(sem, semWatcher::wakeUps, semWatcher::events, watcher.keys().semaphoreChannel(sem),
                watcher.keys().semaphoreGrantsChannel(sem), owner -> ((io.reactivelocks.spi.semaphore.PermitGrant.Granted)
                        permits.tryGrant(sem, List.of(owner), 2, LEASE).block(STEP)).tokens().get(0),
                owner -> permits.release(sem, owner).block(STEP));
        String lock = name("rw-wakeups");
        RedisReadWriteStore rwWatcher = new RedisReadWriteStore(watcher, false);
        grantsReachObserversOnly(lock, rwWatcher::wakeUps, rwWatcher::events, watcher.keys().readWriteChannel(lock),
                watcher.keys().readWriteGrantsChannel(lock), owner -> ((io.reactivelocks.spi.semaphore.PermitGrant.Granted)
                        rw.tryGrant(lock, owner, io.reactivelocks.rwlock.LockMode.WRITE, true, false, LEASE).block(STEP))
                        .tokens().get(0),
                owner -> rw.release(lock, owner).block(STEP));
    }

    /**
     * A waiter's stream subscribes {@code channel} alone and hears a grant's release but not the grant; an observer's
     * subscribes {@code grants} too and hears both; the waiter's stream still carries no grant after that.
     */
    private void grantsReachObserversOnly(String name, java.util.function.Function<String, Flux<LockEvent>> wakeUps,
            java.util.function.Function<String, Flux<LockEvent>> events, String channel, String grants,
            java.util.function.ToLongFunction<String> grant, java.util.function.Consumer<String> release) {
        List<LockEvent> waits = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<LockEvent> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        var waiting = wakeUps.apply(name).subscribe(waits::add);
        reactor.core.Disposable observing = null;
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> waits.contains(new LockEvent.Subscribed(name)));
            assertThat(c.sync().pubsubNumsub(channel).get(channel)).as(channel).isEqualTo(1L);
            assertThat(c.sync().pubsubNumsub(grants).get(grants)).as("nobody listens on %s", grants).isZero();
            String owner = GrantRequest.newOwner();
            grant.applyAsLong(owner);
            release.accept(owner);
            await().atMost(STEP).until(() -> waits.size() == 2);
            assertThat(waits).containsExactly(new LockEvent.Subscribed(name), new LockEvent.Released(name, owner, false));

            observing = events.apply(name).subscribe(seen::add);
            await().atMost(STEP).until(() -> !seen.isEmpty());
            assertThat(seen).containsExactly(new LockEvent.Subscribed(name)); // once, when both channels are live
            assertThat(c.sync().pubsubNumsub(grants).get(grants)).as(grants).isEqualTo(1L);
            String next = GrantRequest.newOwner();
            long token = grant.applyAsLong(next);
            release.accept(next);
            await().atMost(STEP).until(() -> seen.size() == 3);
            assertThat(seen).containsExactly(new LockEvent.Subscribed(name), new LockEvent.Acquired(name, next, token),
                    new LockEvent.Released(name, next, false));
            await().atMost(STEP).until(() -> waits.size() == 3);
            assertThat(waits).as("the waiter's stream carries no grant").noneMatch(e -> e instanceof LockEvent.Acquired);
        } finally {
            waiting.dispose();
            if (observing != null) {
                observing.dispose();
            }
        }
    }

    @Test
    void bothLiveTellsSubscribedOnceBothChannelsSaidItAsOften() {
        reactor.core.publisher.Sinks.Many<LockEvent> a = reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
        reactor.core.publisher.Sinks.Many<LockEvent> b = reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
        LockEvent.Subscribed live = new LockEvent.Subscribed("n");
        LockEvent.Released released = new LockEvent.Released("n", "o", false);
        LockEvent.Acquired acquired = new LockEvent.Acquired("n", "p", 7);
        StepVerifier.create(RedisLockBackend.bothLive(a.asFlux(), b.asFlux()))
                .then(() -> a.tryEmitNext(live))
                .expectNoEvent(Duration.ofMillis(10))
                .then(() -> b.tryEmitNext(live))
                .expectNext(live)
                .then(() -> a.tryEmitNext(released))
                .expectNext(released)
                .then(() -> b.tryEmitNext(live)) // a reconnect: the grants channel again first
                .then(() -> b.tryEmitNext(acquired))
                .expectNext(acquired)
                .then(() -> a.tryEmitNext(live))
                .expectNext(live)
                .then(a::tryEmitComplete)
                .then(b::tryEmitComplete)
                .expectComplete()
                .verify(STEP);
    }

    @Test
    void subscribersChurningOnOneNameNeverLoseTheServerSubscription() {
        RedisLockBackend watcher = backend();
        String name = name("churn");
        String channel = watcher.keys().channel(name);
        // many short subscriptions racing on one name: every one sees Subscribed
        Flux.range(0, 200)
                .flatMap(i -> watcher.events(name).take(1).subscribeOn(reactor.core.scheduler.Schedulers.parallel()), 16)
                .as(StepVerifier::create)
                .expectNextCount(200)
                .expectComplete()
                .verify(STEP.multipliedBy(3));
        // then a long-lived one must be live on the server
        List<LockEvent> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        var d = watcher.events(name).subscribe(seen::add);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> !seen.isEmpty());
            assertThat(c.sync().pubsubNumsub(channel).get(channel)).isEqualTo(1L);
        } finally {
            d.dispose();
        }
    }

    @Test
    void closeCompletesEventStreamsAndLaterCallsFailPermanently() {
        RedisLockBackend b = redis.backend();
        String name = name("close");
        StepVerifier.create(b.events(name))
                .expectNext(new LockEvent.Subscribed(name))
                .then(() -> b.close().subscribe())
                .expectComplete()
                .verify(STEP);
        b.close().block(STEP); // idempotent
        StepVerifier.create(b.tryGrant(request(name, GrantRequest.newOwner(), LEASE)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isFalse()))
                .verify(STEP);
        StepVerifier.create(b.events(name)).expectComplete().verify(STEP);
    }

    @Test
    void scriptsAreLoadedAgainAfterTheServerForgotThem() {
        RedisLockBackend b = backend();
        String name = name("noscript");
        String owner = GrantRequest.newOwner();
        b.tryGrant(request(name, owner, LEASE)).block(STEP);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            c.sync().scriptFlush();
            assertThat(c.sync().scriptExists(LuaScript.RELEASE.sha())).containsExactly(false);
            assertThat(b.release(name, owner).block(STEP)).isTrue();
            assertThat(c.sync().scriptExists(LuaScript.RELEASE.sha())).as("cached again by EVAL").containsExactly(true);
        }
    }

    @Test
    void aWrongTypeKeyIsAPermanentError() {
        RedisLockBackend b = backend();
        String name = name("wrongtype");
        String key = b.keys().lock(name);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            c.sync().hset(key, "not", "a string");
            StepVerifier.create(b.tryGrant(request(name, GrantRequest.newOwner(), LEASE)))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("WRONGTYPE");
                        assertThat(((LockBackendException) e).isTransient()).isFalse();
                        assertThat(((LockBackendException) e).lockName()).isEqualTo(name);
                    })
                    .verify(STEP);
        } finally {
            try (StatefulRedisConnection<String, String> c = redis.connect()) {
                c.sync().del(key);
            }
        }
    }

    @Test
    void anUnreachableServerIsATransientError() {
        RedisLockBackend b = RedisLockBackend.create(redis.client, redis.options().mutate()
                .uri(io.lettuce.core.RedisURI.create("redis://127.0.0.1:" + freePort())).build());
        backends.add(b);
        StepVerifier.create(b.tryGrant(request(name("down"), GrantRequest.newOwner(), LEASE)))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(LockBackendException.class);
                    assertThat(((LockBackendException) e).isTransient()).isTrue();
                })
                .verify(STEP);
        StepVerifier.create(b.events("down"))
                .expectErrorSatisfies(e -> assertThat(((LockBackendException) e).isTransient()).isTrue())
                .verify(STEP);
    }

    @Test
    void theClientsOwnUriIsUsedWhenNoneIsGivenAndConnectsOffTheCallersThread() {
        RedisLockBackend b = RedisLockBackend.create(redis.client, RedisLockOptions.builder().keyPrefix(redis.prefix).build());
        backends.add(b);
        String name = name("default-uri");
        String owner = GrantRequest.newOwner();
        // subscribed from a non-blocking thread: the blocking connect must not run there (BlockHound)
        Mono<Attempt> grant = b.tryGrant(request(name, owner, LEASE)).subscribeOn(reactor.core.scheduler.Schedulers.parallel());
        StepVerifier.create(grant).assertNext(a -> assertThat(a).isInstanceOf(Attempt.Granted.class)).expectComplete().verify(STEP);
        assertThat(b.release(name, owner).block(STEP)).isTrue();
    }

    @Test
    void hostileNamesAreDataAndDoNotCollide() {
        RedisLockBackend b = backend();
        String u = UUID.randomUUID().toString();
        List<String> names = new ArrayList<>(List.of("ünïcødé-锁-🔒-" + u, "a/b/../c-" + u, "*-" + u, "?-" + u,
                "[a-z]-" + u, "it's-" + u, "100%-" + u, "%25-" + u, "{tag}-" + u, "}{-" + u, "{" + u, "}" + u,
                "{}" + u, "line\nbreak-" + u, "nul\u0000byte-" + u, " -" + u, "a:b:c-" + u, "a%3Ab%3Ac-" + u,
                "lone\uD800surrogate-" + u, "lone?surrogate-" + u, "lone\uFFFDsurrogate-" + u));
        String prefix = "x-" + u + "-"; // 39 bytes
        names.add(prefix + "a" + "é".repeat((1024 - prefix.length() - 1) / 2));
        names.add(prefix + "{".repeat(1024 - prefix.length()));
        assertThat(names.get(names.size() - 2).getBytes(StandardCharsets.UTF_8)).hasSize(1024);
        List<String> owners = new ArrayList<>();
        for (String n : names) {
            String owner = GrantRequest.newOwner();
            assertThat(b.tryGrant(request(n, owner, LEASE)).block(STEP)).as("grant of %s", n).isInstanceOf(Attempt.Granted.class);
            owners.add(owner);
        }
        for (int i = 0; i < names.size(); i++) {
            assertThat(b.inspect(names.get(i)).block(STEP).owner()).as("holder of %s", names.get(i)).isEqualTo(owners.get(i));
            String key = b.keys().lock(names.get(i));
            assertThat(key.substring(redis.prefix.length() + 1, key.length() - "}:lock".length()))
                    .as("hash tag").doesNotContain("{", "}", "*", "?", "[", "]");
        }
        for (int i = 0; i < names.size(); i++) {
            assertThat(b.release(names.get(i), owners.get(i)).block(STEP)).isTrue();
        }
    }

    private static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
