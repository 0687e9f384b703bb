package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A semaphore waiter with N &gt; 1 counts the keys before its unit down from their deletions
 * ({@link LineWatch}), on a real etcd: let in by exactly the deletion that leaves N − k before it,
 * never by a deletion behind it; the count taken again by a read when the watch starts after the
 * refusing read (deletions in between counted once) or when the refusing read did not see the whole
 * line; a key of its own unit gone ends the wait with "look again".
 */
class EtcdLineWatchTest {

    private static final Duration STEP = Duration.ofSeconds(15);
    /** Long enough for a deletion to arrive if it (wrongly) ended the wait. */
    private static final Duration QUIET = Duration.ofMillis(300);

    private static EtcdTestSupport etcd;
    private static Client client;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        client = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
    }

    @AfterAll
    static void stopServer() {
        if (client != null) {
            client.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    /** A name's range with keys put one by one (each its own create revision). */
    private static final class Range {
        final ByteSequence prefix;

        Range() {
            prefix = bytes(etcd.prefix + "-line/" + UUID.randomUUID() + "/");
        }

        ByteSequence key(String k) {
            return prefix.concat(bytes(k));
        }

        /** @return the create revision of the new key */
        long put(String k) throws Exception {
            return client.getKVClient().put(key(k), bytes("v")).get(10, TimeUnit.SECONDS).getHeader().getRevision();
        }

        void delete(String k) throws Exception {
            assertThat(client.getKVClient().delete(key(k)).get(10, TimeUnit.SECONDS).getDeleted()).isEqualTo(1);
        }

        long revision() throws Exception {
            return client.getKVClient().get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
                    .get(10, TimeUnit.SECONDS).getHeader().getRevision();
        }

        void clear() throws Exception {
            client.getKVClient().delete(prefix, DeleteOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** @return deletes the keys in turn (a step of a {@link StepVerifier} script) */
    private static Runnable deleting(Range r, String... keys) {
        return () -> {
            try {
                for (String k : keys) {
                    r.delete(k);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /** A watch of its own per test call: the tests of the shared watch make theirs. */
    private static Mono<LineWatch.End> await(LineWatch.Line line) {
        LineWatch w = new LineWatch(client.getWatchClient(), client.getKVClient());
        return w.await(line).doFinally(x -> w.close());
    }

    @Test
    void letInByTheDeletionThatLeavesNMinusKBeforeItNeverByOneBehindIt() throws Exception {
        Range r = new Range();
        r.put("a");
        r.put("b");
        r.put("c");
        long unit = r.put("u");
        r.put("behind");
        // N = 2, k = 1, three keys before: two must go
        LineWatch.Line line = new LineWatch.Line(r.prefix, unit, 1, 2, r.revision(), 3);
        StepVerifier.create(await(line))
                .expectSubscription()
                .then(deleting(r, "behind", "b")) // "behind" is after the unit: not counted
                .expectNoEvent(QUIET)
                .then(deleting(r, "a"))
                .expectNext(LineWatch.End.LET_IN)
                .expectComplete()
                .verify(STEP);
        r.clear();
    }

    @Test
    void deletionsBetweenTheRefusingReadAndTheWatchAreCountedOnceByARead() throws Exception {
        Range r = new Range();
        r.put("a");
        r.put("b");
        r.put("c");
        r.put("d");
        long unit = r.put("u");
        long refused = r.revision();
        // N = 3, k = 1, four keys before at the refusing read; one goes before the watch starts
        r.delete("a");
        LineWatch.Line line = new LineWatch.Line(r.prefix, unit, 1, 3, refused, 4);
        StepVerifier.create(await(line))
                .expectSubscription()
                .expectNoEvent(QUIET) // three left: not yet (a deletion counted twice would have let it in here)
                .then(deleting(r, "c"))
                .expectNext(LineWatch.End.LET_IN)
                .expectComplete()
                .verify(STEP);
        r.clear();
    }

    @Test
    void aLineTheRefusingReadDidNotCountIsCountedByARead() throws Exception {
        Range r = new Range();
        r.put("a");
        r.put("b");
        long unit = r.put("u");
        // N = 2, k = 1, two keys before that the refusing read did not count: one must go
        LineWatch.Line line = new LineWatch.Line(r.prefix, unit, 1, 2, r.revision(), -1);
        StepVerifier.create(await(line))
                .expectSubscription()
                .expectNoEvent(QUIET)
                .then(deleting(r, "a"))
                .expectNext(LineWatch.End.LET_IN)
                .expectComplete()
                .verify(STEP);
        // the deletions before the watch already let it in: the read says so at once
        Range s = new Range();
        s.put("a");
        s.put("b");
        long unit2 = s.put("u");
        long refused = s.revision();
        s.delete("a");
        StepVerifier.create(await(new LineWatch.Line(s.prefix, unit2, 1, 2, refused, 2)))
                .expectNext(LineWatch.End.LET_IN)
                .expectComplete()
                .verify(STEP);
        r.clear();
        s.clear();
    }

    @Test
    void aKeyOfTheUnitGoneEndsTheWaitWithLookAgain() throws Exception {
        Range r = new Range();
        r.put("a");
        r.put("b");
        long unit = r.put("u");
        LineWatch.Line line = new LineWatch.Line(r.prefix, unit, 1, 1, r.revision(), 2);
        StepVerifier.create(await(line))
                .expectSubscription()
                .then(deleting(r, "u"))
                .expectNext(LineWatch.End.LOOK_AGAIN)
                .expectComplete()
                .verify(STEP);
        // and gone before the watch started: the read finds it
        long unit2 = r.put("u2");
        long refused = r.revision();
        r.delete("u2");
        StepVerifier.create(await(new LineWatch.Line(r.prefix, unit2, 1, 1, refused, 2)))
                .expectNext(LineWatch.End.LOOK_AGAIN)
                .expectComplete()
                .verify(STEP);
        r.clear();
    }

    /** @return the server's request count once two readings 200 ms apart agree */
    private static long quiet() {
        java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong(-1);
        org.awaitility.Awaitility.await().atMost(STEP).pollDelay(Duration.ofMillis(200)).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    long now = etcd.requestsReceived();
                    return seen.getAndSet(now) == now;
                });
        return seen.get();
    }

    @Test
    void waitersOfANameShareOneWatchAndOneJoiningLateCountsWhatItMissedFromMemory() throws Exception {
        Range r = new Range();
        r.put("a");
        r.put("b");
        r.put("c");
        long first = r.put("u1");
        long refusedFirst = r.revision();
        long second = r.put("u2");
        long refusedSecond = r.revision(); // u2's read: a, b, c, u1 before it
        LineWatch w = new LineWatch(client.getWatchClient(), client.getKVClient());
        try {
            // N = 2, k = 1: u1 (three before) needs two deletions; u2 (four before) three
            java.util.concurrent.atomic.AtomicReference<LineWatch.End> one = new java.util.concurrent.atomic.AtomicReference<>();
            reactor.core.Disposable d1 = w.await(new LineWatch.Line(r.prefix, first, 1, 2, refusedFirst, 3)).subscribe(one::set);
            r.put("late");
            org.awaitility.Awaitility.await().atMost(STEP).until(() -> w.deliveredUpTo(r.prefix) >= 0); // the watch is created
            long deleted = r.revision() + 1;
            r.delete("a"); // u1: 2 left; delivered before u2 joins
            org.awaitility.Awaitility.await().atMost(STEP).until(() -> w.deliveredUpTo(r.prefix) >= deleted);
            // u1's watch started after its refusing read (the "late" put): u1 counts its line by a read of its own,
            // which under load may still be in flight here — the count starts once the server is quiet
            long requests = quiet();
            java.util.concurrent.atomic.AtomicReference<LineWatch.End> two = new java.util.concurrent.atomic.AtomicReference<>();
            reactor.core.Disposable d2 = w.await(new LineWatch.Line(r.prefix, second, 1, 2, refusedSecond, 4)).subscribe(two::set);
            // u2's read was before a's deletion: the watch delivered it already, so u2 counts it from memory (3 left)
            assertThat(etcd.requestsReceived() - requests).as("requests to join the shared watch").isZero();
            r.delete("late"); // behind both: counts for nobody
            r.delete("b"); // u1: 1 left -> let in; u2: 2 left
            org.awaitility.Awaitility.await().atMost(STEP).until(() -> one.get() != null);
            assertThat(one.get()).isEqualTo(LineWatch.End.LET_IN);
            org.awaitility.Awaitility.await().pollDelay(QUIET).atMost(STEP).until(() -> true);
            assertThat(two.get()).as("u2 with two before it").isNull();
            r.delete("u1"); // u2: 1 left -> let in
            org.awaitility.Awaitility.await().atMost(STEP).until(() -> two.get() != null);
            assertThat(two.get()).isEqualTo(LineWatch.End.LET_IN);
            d1.dispose();
            d2.dispose();
        } finally {
            w.close();
        }
        r.clear();
    }

    @Test
    void closingTheWatchEndsEveryWait() throws Exception {
        Range r = new Range();
        r.put("a");
        long unit = r.put("u");
        LineWatch w = new LineWatch(client.getWatchClient(), client.getKVClient());
        StepVerifier.create(w.await(new LineWatch.Line(r.prefix, unit, 1, 1, r.revision(), 1)))
                .expectSubscription()
                .expectNoEvent(QUIET)
                .then(w::close)
                .expectNext(LineWatch.End.CLOSED)
                .expectComplete()
                .verify(STEP);
        StepVerifier.create(w.await(new LineWatch.Line(r.prefix, unit, 1, 1, r.revision(), 1)))
                .expectNext(LineWatch.End.CLOSED)
                .expectComplete()
                .verify(STEP);
        r.clear();
    }
}
