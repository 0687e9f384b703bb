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
            ByteSequence p1 = keys.key("q1", "p");
            ByteSequence own1 = keys.key("q1", "own");
            put(p1);
            long own1Rev = put(own1);
            Disposable held1 = watch.keyGone(own1, own1Rev).subscribe();
            await().atMost(STEP).until(watch::live); // nothing was written since: live when created
            assertThat(watch.predecessorGone(own1, own1Rev, p1, own1Rev - 1).gone().block(STEP))
                    .as("a read before the watch's start").isEqualTo(HeldKeyWatch.Gone.NOT_WATCHED);
            HeldKeyWatch.PredecessorWait w1 = watch.predecessorGone(own1, own1Rev, p1, revision());
            StepVerifier.create(w1.gone())
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(200))
                    .then(() -> delete(p1))
                    .expectNext(HeldKeyWatch.Gone.IN_ORDER)
                    .verifyComplete();

            // the queued key deleted first, then its predecessor: not in order
            ByteSequence p2 = keys.key("q2", "p");
            ByteSequence own2 = keys.key("q2", "own");
            put(p2);
            long own2Rev = put(own2);
            Mono<Void> own2Gone = watch.keyGone(own2, own2Rev).cache();
            own2Gone.subscribe();
            HeldKeyWatch.PredecessorWait w2 = watch.predecessorGone(own2, own2Rev, p2, revision());
            delete(own2);
            delete(p2);
            assertThat(w2.gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.UNORDERED);
            StepVerifier.create(own2Gone).expectComplete().verify(STEP);

            // both deleted in one transaction, the predecessor's delete first: the same revision, not in order
            ByteSequence p3 = keys.key("q3", "p");
            ByteSequence own3 = keys.key("q3", "own");
            put(p3);
            long own3Rev = put(own3);
            Disposable held3 = watch.keyGone(own3, own3Rev).subscribe();
            HeldKeyWatch.PredecessorWait w3 = watch.predecessorGone(own3, own3Rev, p3, revision());
            Mono.fromFuture(() -> client.getKVClient().txn()
                    .Then(Op.delete(p3, DeleteOption.DEFAULT), Op.delete(own3, DeleteOption.DEFAULT)).commit()).block(STEP);
            assertThat(w3.gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.UNORDERED);

            // the predecessor deleted before the wait was registered: the watch remembers it, in order
            ByteSequence p4 = keys.key("q4", "p");
            ByteSequence own4 = keys.key("q4", "own");
            put(p4);
            long own4Rev = put(own4);
            Disposable held4 = watch.keyGone(own4, own4Rev).subscribe();
            long read4 = revision();
            ByteSequence marker = keys.key("q4", "marker");
            Mono<Void> markerGone = watch.keyGone(marker, put(marker)).cache();
            markerGone.subscribe();
            delete(p4);
            delete(marker);
            StepVerifier.create(markerGone).as("the watch saw p4's deletion").expectComplete().verify(STEP);
            assertThat(watch.predecessorGone(own4, own4Rev, p4, read4).gone().block(STEP)).isEqualTo(HeldKeyWatch.Gone.IN_ORDER);

            // a wait left when the watch closes: not watched
            ByteSequence p5 = keys.key("q5", "p");
            ByteSequence own5 = keys.key("q5", "own");
            put(p5);
            long own5Rev = put(own5);
            Disposable held5 = watch.keyGone(own5, own5Rev).subscribe();
            HeldKeyWatch.PredecessorWait w5 = watch.predecessorGone(own5, own5Rev, p5, revision());
            StepVerifier.create(w5.gone())
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(100))
                    .then(watch::close)
                    .expectNext(HeldKeyWatch.Gone.NOT_WATCHED)
                    .verifyComplete();
            held1.dispose();
            held3.dispose();
            held4.dispose();
            held5.dispose();
        } finally {
            watch.close();
            for (String n : new String[] {"q1", "q2", "q3", "q4", "q5"}) {
                delete(keys.key(n, "p"));
                delete(keys.key(n, "own"));
            }
        }
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
