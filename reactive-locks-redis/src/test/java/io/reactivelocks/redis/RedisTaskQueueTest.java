package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** {@link RedisTaskQueue} (task capture) against a real redis-server. */
class RedisTaskQueueTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** A 10-minute backoff: only a notification or the server's expiry hint can wake a capturer in time. */
    private static final LockOptions NO_POLLING = LockOptions.builder()
            .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
            .build();

    private static RedisTestSupport redis;
    private final List<RedisLockBackend> backends = new ArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();

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
    void closeBackends() {
        subscriptions.forEach(Disposable::dispose);
        backends.forEach(b -> b.close().block(STEP));
    }

    private RedisTaskQueue queue(LockOptions options) {
        RedisLockBackend b = redis.backend();
        backends.add(b);
        return RedisTaskQueue.create(b, options);
    }

    private RedisTaskQueue queue() {
        return queue(LockOptions.defaults());
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static long zcard(String key) {
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            return c.sync().zcard(key);
        }
    }

    private static RedisKeys keys() {
        return new RedisKeys(redis.prefix);
    }

    private static List<String> ids(int n) {
        return IntStream.range(0, n).mapToObj(i -> "task-" + i).collect(Collectors.toList());
    }

    @Test
    void captureRespectsDemandAndNeverCapturesMoreThanRequested() {
        RedisTaskQueue tasks = queue(NO_POLLING);
        String q = name("demand");
        assertThat(tasks.registerAll(q, ids(10), 1).block(STEP)).isEqualTo(10);
        List<TaskClaim> got = new CopyOnWriteArrayList<>();
        StepVerifier.create(tasks.capture(q), 0)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(200))
                .then(() -> assertThat(zcard(keys().claimed(q))).as("nothing captured without demand").isZero())
                .thenRequest(3)
                .recordWith(() -> got)
                .expectNextCount(3)
                .expectNoEvent(Duration.ofMillis(300))
                .then(() -> {
                    assertThat(zcard(keys().claimed(q))).as("in progress on the server").isEqualTo(3);
                    assertThat(zcard(keys().pending(q))).isEqualTo(7);
                })
                .thenRequest(2)
                .expectNextCount(2)
                .thenCancel()
                .verify(STEP);
        assertThat(got).hasSize(5).extracting(TaskClaim::taskId).doesNotHaveDuplicates();
        assertThat(got).extracting(TaskClaim::token).isSorted().doesNotHaveDuplicates();
        assertThat(got).allSatisfy(c -> {
            assertThat(c.queue()).isEqualTo(q);
            assertThat(c.attempt()).isEqualTo(1);
            assertThat(c.retriesLeft()).isEqualTo(1);
            assertThat(c.isValid(tasks.options().clock())).isTrue();
            assertThat(tasks.status(q, c.taskId()).block(STEP).state()).isEqualTo(TaskState.IN_PROGRESS);
        });
        assertThat(got.subList(0, 3)).extracting(TaskClaim::taskId).containsExactly("task-0", "task-1", "task-2");
        assertThat(zcard(keys().claimed(q))).as("claims stay the subscriber's after cancel").isEqualTo(5);
    }

    @Test
    void tryCaptureTakesWhatIsThereUpToTheLimitAndTheDemand() {
        RedisTaskQueue tasks = queue();
        String q = name("try");
        tasks.registerAll(q, ids(5), 0).block(STEP);
        StepVerifier.create(tasks.tryCapture(q, 2)).expectNextCount(2).expectComplete().verify(STEP);
        StepVerifier.create(tasks.tryCapture(q, 10), 1)
                .expectNextCount(1)
                .expectNoEvent(Duration.ofMillis(100))
                .then(() -> assertThat(zcard(keys().claimed(q))).isEqualTo(3))
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(2)
                .expectComplete()
                .verify(STEP);
        StepVerifier.create(tasks.tryCapture(q, 1)).as("drained").expectComplete().verify(STEP);
    }

    @Test
    void eightConcurrentCapturersCompleteEveryTaskExactlyOnce() {
        int taskCount = 1000;
        String q = name("race");
        List<String> ids = ids(taskCount);
        Map<String, AtomicInteger> completions = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        List<RedisTaskQueue> capturers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            capturers.add(queue()); // each with its own connections
        }
        AtomicInteger[] perCapturer = new AtomicInteger[capturers.size()];
        for (int i = 0; i < capturers.size(); i++) {
            RedisTaskQueue tasks = capturers.get(i);
            AtomicInteger mine = perCapturer[i] = new AtomicInteger();
            subscriptions.add(tasks.capture(q)
                    .flatMap(claim -> {
                        tokens.add(claim.token());
                        mine.incrementAndGet();
                        // every tenth task is given back once: it must still be completed exactly once
                        if (claim.attempt() == 1 && claim.taskId().hashCode() % 10 == 0) {
                            return tasks.release(claim);
                        }
                        return tasks.complete(claim).doOnNext(ok -> {
                            if (ok) {
                                completions.computeIfAbsent(claim.taskId(), k -> new AtomicInteger()).incrementAndGet();
                                completed.incrementAndGet();
                            } else {
                                rejected.incrementAndGet();
                            }
                        });
                    }, 16)
                    .subscribe());
        }
        assertThat(capturers.get(0).registerAll(q, ids, 0).block(STEP)).isEqualTo(taskCount);
        await().atMost(Duration.ofSeconds(30)).until(() -> completed.get() >= taskCount);
        subscriptions.forEach(Disposable::dispose);
        assertThat(completions.keySet()).as("none missing").containsExactlyInAnyOrderElementsOf(ids);
        assertThat(completions.values()).as("none twice").allMatch(n -> n.get() == 1);
        assertThat(completed).hasValue(taskCount);
        assertThat(rejected).as("a live claim is never rejected").hasValue(0);
        assertThat(tokens).as("every claim has its own token").doesNotHaveDuplicates();
        assertThat(perCapturer).as("claims per capturer").filteredOn(n -> n.get() > 0).hasSizeGreaterThan(1);
        assertThat(zcard(keys().pending(q)) + zcard(keys().claimed(q))).isZero();
        assertThat(capturers.get(1).status(q, "task-7").block(STEP).state()).isEqualTo(TaskState.DONE);
    }

    @Test
    void anExpiredClaimIsRecapturedByAnotherCapturerWithAHigherTokenAndTheOldClaimIsRejected() {
        LockOptions shortClaims = NO_POLLING.mutate().leaseTime(Duration.ofMillis(400)).build();
        RedisTaskQueue first = queue(shortClaims);
        RedisTaskQueue second = queue(shortClaims);
        String q = name("expiry");
        first.register(q, "t", 2).block(STEP);
        TaskClaim old = first.tryCapture(q, 1).blockFirst(STEP);
        assertThat(old).isNotNull();
        StepVerifier.create(second.tryCapture(q, 1)).as("held").expectComplete().verify(STEP);

        // a waiting capturer with a 10-minute backoff is woken by the server's expiry hint: no sweeper, no polling
        long start = System.nanoTime();
        TaskClaim taken = second.capture(q).blockFirst(STEP);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        assertThat(taken.taskId()).isEqualTo("t");
        assertThat(taken.token()).isGreaterThan(old.token());
        assertThat(taken.attempt()).isEqualTo(2);
        assertThat(taken.retriesLeft()).as("an expiry uses no retry").isEqualTo(2);
        assertThat(second.status(q, "t").block(STEP).state()).isEqualTo(TaskState.IN_PROGRESS);

        assertThat(first.complete(old).block(STEP)).as("the old claim completes").isFalse();
        assertThat(first.fail(old).block(STEP)).isFalse();
        assertThat(first.release(old).block(STEP)).isFalse();
        StepVerifier.create(first.renew(old)).expectComplete().verify(STEP);
        assertThat(second.complete(taken).block(STEP)).isTrue();
        TaskStatus done = first.status(q, "t").block(STEP);
        assertThat(done.state()).isEqualTo(TaskState.DONE);
        assertThat(done.token()).isEqualTo(taken.token());
        assertThat(done.captures()).isEqualTo(2);
        assertThat(done.claimRemaining()).isNull();
    }

    @Test
    void anExpiredClaimNotYetRecapturedMayStillCompleteButNotRenew() {
        RedisTaskQueue tasks = queue(LockOptions.builder().leaseTime(Duration.ofMillis(300)).build());
        String q = name("late");
        tasks.register(q, "t", 0).block(STEP);
        TaskClaim claim = tasks.tryCapture(q, 1).blockFirst(STEP);
        await().atMost(STEP).until(() -> tasks.status(q, "t").block(STEP).state() == TaskState.PENDING);
        StepVerifier.create(tasks.renew(claim)).expectComplete().verify(STEP);
        assertThat(tasks.complete(claim).block(STEP)).isTrue();
        assertThat(tasks.status(q, "t").block(STEP).state()).isEqualTo(TaskState.DONE);
        StepVerifier.create(tasks.tryCapture(q, 1)).expectComplete().verify(STEP);
    }

    @Test
    void renewAndHoldKeepAClaimAliveAndHoldEndsWhenItIsLost() {
        RedisTaskQueue tasks = queue(LockOptions.builder().leaseTime(Duration.ofMillis(600)).build());
        String q = name("hold");
        tasks.register(q, "t", 0).block(STEP);
        TaskClaim claim = tasks.tryCapture(q, 1).blockFirst(STEP);
        TaskClaim renewed = tasks.renew(claim).block(STEP);
        assertThat(renewed.token()).isEqualTo(claim.token());
        assertThat(renewed.validUntilNanos()).isGreaterThan(claim.validUntilNanos());
        List<TaskClaim> updates = new CopyOnWriteArrayList<>();
        AtomicReference<String> ended = new AtomicReference<>();
        subscriptions.add(tasks.hold(renewed).subscribe(updates::add, e -> ended.set("error " + e), () -> ended.set("complete")));
        await().atMost(STEP).until(() -> updates.size() >= 4); // outlives the 600 ms claim several times
        assertThat(ended.get()).isNull();
        assertThat(tasks.status(q, "t").block(STEP).state()).isEqualTo(TaskState.IN_PROGRESS);
        assertThat(tasks.remove(q, "t").block(STEP)).isTrue();
        await().atMost(STEP).until(() -> ended.get() != null);
        assertThat(ended.get()).isEqualTo("complete");
        StepVerifier.create(tasks.status(q, "t")).expectComplete().verify(STEP);
    }

    @Test
    void failUsesRetriesAndExhaustedTasksAreDeadAndStayVisible() {
        RedisTaskQueue tasks = queue();
        String q = name("fail");
        tasks.register(q, "t", 2).block(STEP);
        for (int attempt = 1; attempt <= 3; attempt++) {
            TaskClaim c = tasks.tryCapture(q, 1).blockFirst(STEP);
            assertThat(c.attempt()).isEqualTo(attempt);
            assertThat(c.retriesLeft()).isEqualTo(3 - attempt);
            assertThat(tasks.fail(c).block(STEP)).isTrue();
            assertThat(tasks.fail(c).block(STEP)).as("a claim ends once").isFalse();
            TaskStatus s = tasks.status(q, "t").block(STEP);
            assertThat(s.failures()).isEqualTo(attempt);
            if (attempt < 3) {
                assertThat(s.state()).isEqualTo(TaskState.FAILED);
                assertThat(s.retriesLeft()).isEqualTo(2 - attempt);
            } else {
                assertThat(s.state()).isEqualTo(TaskState.DEAD);
                assertThat(s.retriesLeft()).isZero();
            }
        }
        StepVerifier.create(tasks.tryCapture(q, 1)).as("dead tasks are not captured").expectComplete().verify(STEP);
        assertThat(tasks.register(q, "t", 5).block(STEP)).as("a known id is left alone").isFalse();
        assertThat(tasks.status(q, "t").block(STEP).state()).isEqualTo(TaskState.DEAD);
        assertThat(tasks.remove(q, "t").block(STEP)).isTrue();
        assertThat(tasks.register(q, "t", 5).block(STEP)).as("after remove it is new again").isTrue();
        assertThat(tasks.status(q, "t").block(STEP)).isEqualTo(new TaskStatus(q, "t", TaskState.PENDING, 5, 0, 0, 0, null));
    }

    @Test
    void releaseMakesTheTaskCapturableAgainWithoutUsingARetry() {
        RedisTaskQueue tasks = queue();
        String q = name("release");
        tasks.register(q, "t", 1).block(STEP);
        TaskClaim c = tasks.tryCapture(q, 1).blockFirst(STEP);
        assertThat(tasks.release(c).block(STEP)).isTrue();
        assertThat(tasks.complete(c).block(STEP)).as("released claims end").isFalse();
        TaskStatus s = tasks.status(q, "t").block(STEP);
        assertThat(s.state()).isEqualTo(TaskState.PENDING);
        assertThat(s.retriesLeft()).isEqualTo(1);
        assertThat(s.failures()).isZero();
        TaskClaim again = tasks.tryCapture(q, 1).blockFirst(STEP);
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.retriesLeft()).isEqualTo(1);
        assertThat(again.token()).isGreaterThan(c.token());
        assertThat(tasks.complete(again).block(STEP)).isTrue();
    }

    @Test
    void aWaitingCaptureIsWokenByRegistrationNotByPolling() {
        RedisTaskQueue capturer = queue(NO_POLLING);
        RedisTaskQueue producer = queue();
        String q = name("wake");
        List<TaskClaim> got = new CopyOnWriteArrayList<>();
        subscriptions.add(capturer.capture(q).subscribe(got::add));
        String channel = keys().queueChannel(q);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 1L);
        }
        producer.register(q, "late", 0).block(STEP);
        await().atMost(Duration.ofSeconds(3)).until(() -> got.size() == 1);
        assertThat(got.get(0).taskId()).isEqualTo("late");
    }

    @Test
    void aCaptureCancelledWhileItsCallIsInFlightLeavesNothingClaimed() {
        RedisTaskQueue tasks = queue();
        String q = name("cancel");
        tasks.registerAll(q, ids(3), 0).block(STEP);
        tasks.capture(q).subscribe(new BaseSubscriber<TaskClaim>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(3);
                s.cancel(); // the call is on its way: its claims must come back
            }

            @Override
            protected void hookOnNext(TaskClaim claim) {
                // the answer beat the cancel: a delivered claim is the subscriber's to give back
                tasks.release(claim).subscribe();
            }
        });
        await().atMost(STEP).until(() -> zcard(keys().claimed(q)) == 0 && zcard(keys().pending(q)) == 3);
        for (String id : ids(3)) {
            TaskStatus s = tasks.status(q, id).block(STEP);
            assertThat(s.captures()).as("captured by the call in flight, then given back").isEqualTo(1);
            assertThat(s.state()).isEqualTo(TaskState.PENDING);
        }
    }

    @Test
    void withClaimCompletesOnSuccessFailsOnErrorReleasesOnCancelAndReportsALostClaim() {
        RedisTaskQueue tasks = queue(LockOptions.builder().leaseTime(Duration.ofMillis(600)).build());
        String q = name("with");
        tasks.registerAll(q, List.of("ok", "boom", "cancel", "lost"), 1).block(STEP);
        Map<String, TaskClaim> claims = tasks.tryCapture(q, 4).collectMap(TaskClaim::taskId).block(STEP);

        // outlives its 600 ms claim: renewed meanwhile
        StepVerifier.create(tasks.withClaim(claims.get("ok"), c -> Mono.delay(Duration.ofMillis(1200)).thenReturn(c.token())))
                .expectNext(claims.get("ok").token()).expectComplete().verify(STEP);
        assertThat(tasks.status(q, "ok").block(STEP).state()).isEqualTo(TaskState.DONE);

        StepVerifier.create(tasks.withClaim(claims.get("boom"), c -> Mono.error(new IllegalStateException("boom"))))
                .expectErrorMessage("boom").verify(STEP);
        assertThat(tasks.status(q, "boom").block(STEP).state()).isEqualTo(TaskState.FAILED);

        StepVerifier.create(tasks.withClaim(claims.get("cancel"), c -> Mono.never()))
                .expectSubscription().thenCancel().verify(STEP);
        await().atMost(STEP).until(() -> tasks.status(q, "cancel").block(STEP).state() == TaskState.PENDING);
        assertThat(tasks.status(q, "cancel").block(STEP).retriesLeft()).isEqualTo(1);

        AtomicReference<Boolean> bodyCancelled = new AtomicReference<>(false);
        StepVerifier.create(tasks.withClaim(claims.get("lost"), c -> tasks.remove(q, "lost")
                        .then(Mono.<String>never()).doOnCancel(() -> bodyCancelled.set(true))))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(LockLostException.class).hasMessageContaining("lost");
                    assertThat(((LockLostException) e).token()).isEqualTo(claims.get("lost").token());
                })
                .verify(STEP);
        assertThat(bodyCancelled.get()).isTrue();
    }

    @Test
    void hostileQueueNamesAndTaskIdsAreDataAndDoNotCollide() {
        RedisTaskQueue tasks = queue();
        String u = UUID.randomUUID().toString().substring(0, 8);
        List<String> hostile = List.of("ünïcødé-锁-🔒", "a/b/../c", "*", "?", "[a-z]", "it's", "100%", "%25", "{tag}",
                "}{", "{", "}", "{}", "line\nbreak", "nul\u0000byte", " ", "a:b:c", "a%3Ab%3Ac", "lone\uD800surrogate",
                "lone?surrogate", "lone\uFFFDsurrogate", "|", "c|1|0|0|0|x", "ready", "é".repeat(512));
        for (String queueName : List.of("{q}" + u, "*" + u, "lone\uD800" + u, "lone?" + u)) {
            assertThat(tasks.registerAll(queueName, hostile, 1).block(STEP)).as("queue %s", queueName).isEqualTo(hostile.size());
            List<TaskClaim> got = tasks.tryCapture(queueName, 100).collectList().block(STEP);
            assertThat(got).extracting(TaskClaim::taskId).containsExactlyElementsOf(hostile);
            assertThat(got).allMatch(c -> c.queue().equals(queueName));
            for (TaskClaim c : got) {
                assertThat(tasks.status(queueName, c.taskId()).block(STEP).state()).as("status of %s", c.taskId())
                        .isEqualTo(TaskState.IN_PROGRESS);
                assertThat(tasks.complete(c).block(STEP)).as("complete %s", c.taskId()).isTrue();
            }
            String key = keys().tasks(queueName);
            assertThat(key.substring(redis.prefix.length() + 1, key.indexOf("}:queue:"))).doesNotContain("{", "}", "*", "?", "[", "]");
        }
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        RedisTaskQueue tasks = queue();
        assertThatThrownBy(() -> tasks.register(null, "t", 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", null, 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.register("", "t", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", "", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.register("q", "é".repeat(513), 0)).hasMessageContaining("taskId").hasMessageContaining("1024");
        assertThatThrownBy(() -> tasks.register("q", "t", -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retries");
        assertThatThrownBy(() -> tasks.registerAll("q", null, 0)).hasMessageContaining("taskIds");
        assertThatThrownBy(() -> tasks.registerAll("q", java.util.Arrays.asList("a", null), 0)).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.capture("")).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.tryCapture("q", 0)).hasMessageContaining("limit");
        assertThatThrownBy(() -> tasks.complete(null)).hasMessageContaining("claim");
        assertThatThrownBy(() -> tasks.withClaim(null, c -> Mono.empty())).hasMessageContaining("claim");
        assertThatThrownBy(() -> tasks.status("q", null)).hasMessageContaining("taskId");
        assertThatThrownBy(() -> RedisTaskQueue.create(null)).hasMessageContaining("backend");
        StepVerifier.create(Flux.concat(tasks.status("q-" + UUID.randomUUID(), "unknown"))).expectComplete().verify(STEP);
    }
}
