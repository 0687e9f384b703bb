package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The shared deletion watch of held keys against a real etcd: a deletion the watch reported before
 * the key registered (the grant's answer and the watch's events come on different streams) still
 * ends that key's hold, and only a deletion after the key's own creation does; a watch with no key
 * left closes, and a key registered later still learns of a deletion made while it was closed. A
 * queued key's wait for its predecessor's deletion through the same watch says "in order" only when
 * the queued key still stood at that deletion.
 */
class HeldKeyWatchTest {

    private static final Duration STEP = Duration.ofSeconds(10);

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

    @Test
    void aDeletionReportedBeforeTheKeyRegisteredEndsItsHoldAndAnOlderOneDoesNot() {
        EtcdKeys keys = new EtcdKeys(etcd.prefix);
        HeldKeyWatch watch = new HeldKeyWatch(client.getKVClient(), client.getWatchClient(), keys, etcd.options());
        try {
            // a first held key opens the shared watch
            ByteSequence a = keys.key("a", "owner-a");
            long tokenA = put(a);
            Disposable first = watch.keyGone(a, tokenA).subscribe();

            // b is granted, then deleted by someone else before the holder registers it
            ByteSequence b = keys.key("b", "owner-b");
            long tokenB = put(b);
            // a held key deleted after b: once its hold ends, the watch has been told of b's deletion (one
            // stream, events in revision order)
            ByteSequence c = keys.key("c", "owner-c");
            Mono<Void> cGone = watch.keyGone(c, put(c)).cache();
            cGone.subscribe();
            delete(b);
            delete(c);
            StepVerifier.create(cGone).as("the hold of the key deleted after b ends").expectComplete().verify(STEP);
            StepVerifier.create(watch.keyGone(b, tokenB))
                    .as("a deletion seen before registration ends the hold")
                    .expectComplete()
                    .verify(STEP);

            // b created again: the remembered deletion is older than the new key, which stays held until deleted
            long tokenB2 = put(b);
            StepVerifier.create(watch.keyGone(b, tokenB2))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(300))
                    .then(() -> delete(b))
                    .expectComplete()
                    .verify(STEP);
            first.dispose();
        } finally {
            watch.close();
            delete(keys.key("a", "owner-a"));
        }
    }

    @Test
    void anIdleWatchClosesAndAKeyRegisteredLaterStillLearnsOfADeletionMadeMeanwhile() {
        EtcdKeys keys = new EtcdKeys(etcd.prefix);
        HeldKeyWatch watch = new HeldKeyWatch(client.getKVClient(), client.getWatchClient(), keys, etcd.options(),
                Duration.ofMillis(100));
        try {
            ByteSequence a = keys.key("idle-a", "owner-a");
            Disposable held = watch.keyGone(a, put(a)).subscribe();
            assertThat(watch.isOpen()).as("opened by the first held key").isTrue();
            held.dispose();
            await().atMost(STEP).until(() -> !watch.isOpen());

            // granted and deleted while no watch is open: registering it later still ends its hold (the watch
            // opens again from the key's own revision)
            ByteSequence d = keys.key("idle-d", "owner-d");
            long tokenD = put(d);
            delete(d);
            StepVerifier.create(watch.keyGone(d, tokenD)).expectComplete().verify(STEP);

            // and a key held across the reopening is told of its deletion
            ByteSequence e = keys.key("idle-e", "owner-e");
            StepVerifier.create(watch.keyGone(e, put(e)))
                    .expectSubscription()
                    .then(() -> assertThat(watch.isOpen()).isTrue())
                    .then(() -> delete(e))
                    .expectComplete()
                    .verify(STEP);
        } finally {
            watch.close();
            delete(keys.key("idle-a", "owner-a"));
        }
    }

    @Test
    void aPredecessorsDeletionIsInOrderOnlyWhenTheQueuedKeyStillStoodThen() {
        EtcdKeys keys = new EtcdKeys(etcd.prefix);
        HeldKeyWatch watch = new HeldKeyWatch(client.getKVClient(), client.getWatchClient(), keys, etcd.options());
        try {
            assertThat(watch.predecessorGone(keys.key("q", "own"), 1, keys.key("q", "p"), 1).gone().block(STEP))
                    .as("no watch open").isEqualTo(HeldKeyWatch.Gone.NOT_WATCHED);

            // the predecessor deleted, the queued key standing: in order
            Queued q1 = queue(keys, watch, "q1");
            await().atMost(STEP).until(watch::live); // nothing was written since: live when created
            assertThat(watch.predecessorGone(q1.own, q1.ownRev, q1.p, q1.ownRev - 1).gone().block(STEP))
                    .as("a read before the watch's start").isEqualTo(HeldKeyWatch.Gone.NOT_WATCHED);
            HeldKeyWatch.PredecessorWait w1 = watch.predecessorGone(q1.own, q1.ownRev, q1.p, revision());
            StepVerifier.create(w1.gone())
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(200))
                    .then(() -> delete(q1.p))
                    .expectNext(HeldKeyWatch.Gone.IN_ORDER)
                    .expectComplete().verify(STEP);

            // the queued key deleted first, then its predecessor: not in order
            Queued q2 = queue(keys, watch, "q2");
            HeldKeyWatch.PredecessorWait w2 = watch.predecessorGone(q2.own, q2.ownRev, q2.p, revision());
            delete(q2.own);
            delete(q2.p);
            assertThat(w2.gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.UNORDERED);
            StepVerifier.create(q2.ownGone).expectComplete().verify(STEP);

            // both deleted in one transaction, the predecessor's delete first: the same revision, not in order
            Queued q3 = queue(keys, watch, "q3");
            HeldKeyWatch.PredecessorWait w3 = watch.predecessorGone(q3.own, q3.ownRev, q3.p, revision());
            Mono.fromFuture(() -> client.getKVClient().txn()
                    .Then(Op.delete(q3.p, DeleteOption.DEFAULT), Op.delete(q3.own, DeleteOption.DEFAULT)).commit()).block(STEP);
            assertThat(w3.gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.UNORDERED);

            // the predecessor deleted before the wait was registered: the watch remembers it, in order
            Queued q4 = queue(keys, watch, "q4");
            long read4 = revision();
            ByteSequence marker = keys.key("q4", "marker");
            Mono<Void> markerGone = watch.keyGone(marker, put(marker)).cache();
            markerGone.subscribe();
            delete(q4.p);
            delete(marker);
            StepVerifier.create(markerGone).as("the watch saw p4's deletion").expectComplete().verify(STEP);
            assertThat(watch.predecessorGone(q4.own, q4.ownRev, q4.p, read4).gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.IN_ORDER);

            // a wait left when the watch closes: not watched
            Queued q5 = queue(keys, watch, "q5");
            HeldKeyWatch.PredecessorWait w5 = watch.predecessorGone(q5.own, q5.ownRev, q5.p, revision());
            StepVerifier.create(w5.gone())
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(100))
                    .then(watch::close)
                    .expectNext(HeldKeyWatch.Gone.NOT_WATCHED)
                    .expectComplete().verify(STEP);
        } finally {
            watch.close();
            for (String n : new String[] {"q1", "q2", "q3", "q4", "q5"}) {
                delete(keys.key(n, "p"));
                delete(keys.key(n, "own"));
            }
        }
    }

    @Test
    void aKeyRegisteredFromBeforeTheWatchsStartIsInOrderOnceItsReadFoundItStanding() {
        EtcdKeys keys = new EtcdKeys(etcd.prefix);
        HeldKeyWatch watch = new HeldKeyWatch(client.getKVClient(), client.getWatchClient(), keys, etcd.options());
        ByteSequence p = keys.key("r", "p");
        ByteSequence own = keys.key("r", "own");
        ByteSequence opener = keys.key("r", "opener");
        try {
            put(p);
            long ownRev = put(own);
            long openerRev = put(opener);
            // the first registration opens the watch from after its own revision, later than the queued key's
            watch.keyGone(opener, openerRev).subscribe();
            Mono<Void> ownGone = watch.keyGone(own, ownRev).cache();
            ownGone.subscribe();
            await("the queued key read once and found standing").atMost(STEP)
                    .until(() -> watch.covers(own, ownRev));
            HeldKeyWatch.PredecessorWait w = watch.predecessorGone(own, ownRev, p, revision());
            delete(p);
            assertThat(w.gone().block(STEP)).as("the predecessor's deletion, the queued key covered since its read")
                    .isEqualTo(HeldKeyWatch.Gone.IN_ORDER);
            delete(own);
            StepVerifier.create(ownGone).expectComplete().verify(STEP);
        } finally {
            watch.close();
            delete(p);
            delete(own);
            delete(opener);
        }
    }

    /** A queued key and the key before it under {@code name}, the queued one registered with the watch. */
    private record Queued(ByteSequence p, ByteSequence own, long ownRev, Mono<Void> ownGone) {
    }

    private static Queued queue(EtcdKeys keys, HeldKeyWatch watch, String name) {
        ByteSequence p = keys.key(name, "p");
        ByteSequence own = keys.key(name, "own");
        put(p);
        long ownRev = put(own);
        Mono<Void> ownGone = watch.keyGone(own, ownRev).cache();
        ownGone.subscribe();
        return new Queued(p, own, ownRev, ownGone);
    }

    private static long revision() {
        return Mono.fromFuture(() -> client.getKVClient().get(ByteSequence.from("/", java.nio.charset.StandardCharsets.UTF_8)))
                .block(STEP).getHeader().getRevision();
    }

    private static long put(ByteSequence key) {
        return Mono.fromFuture(() -> client.getKVClient().put(key, ByteSequence.EMPTY)).block(STEP).getHeader().getRevision();
    }

    private static void delete(ByteSequence key) {
        Mono.fromFuture(() -> client.getKVClient().delete(key)).block(STEP);
    }
}
