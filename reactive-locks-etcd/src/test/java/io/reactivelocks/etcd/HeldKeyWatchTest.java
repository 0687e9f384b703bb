package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
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
 * left closes, and a key registered later still learns of a deletion made while it was closed.
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

    private static long put(ByteSequence key) {
        return Mono.fromFuture(() -> client.getKVClient().put(key, ByteSequence.EMPTY)).block(STEP).getHeader().getRevision();
    }

    private static void delete(ByteSequence key) {
        Mono.fromFuture(() -> client.getKVClient().delete(key)).block(STEP);
    }
}
