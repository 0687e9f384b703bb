package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A waiter's watch against a real etcd ({@link WaiterWatch}): it starts from the store's current
 * revision, so a change between the read that refused the waiter and the watch's start reaches it
 * only through the gap check — a deletion (or, where puts count, a put; or one key of a prefix gone)
 * made in that gap wakes it, an unrelated write in the gap does not (and the watch still delivers the
 * change that follows), and with nothing written since the read no read is sent at all.
 */
class WaiterWatchTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static EtcdTestSupport etcd;
    private static Client client;
    private static final AtomicInteger ranges = new AtomicInteger();

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
        ClientInterceptor countRanges = new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                if (method.getFullMethodName().endsWith("KV/Range")) {
                    ranges.incrementAndGet();
                }
                return next.newCall(method, options);
            }
        };
        client = Client.builder().endpoints("http://" + etcd.server.host() + ":" + etcd.server.port())
                .interceptor(countRanges).build();
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
    void aDeletionBetweenTheReadAndTheWatchWakesTheWaiter() {
        ByteSequence k = key("gap-delete/a");
        put(k);
        GetResponse read = get(k);
        delete(k); // before the watch exists: no event will ever reach it
        woken(await(read, WaiterWatch.Seen.key(read.getKvs().get(0), false)));
    }

    @Test
    void aKeyPutAgainInItsPlaceBetweenTheReadAndTheWatchCountsAsDeleted() {
        ByteSequence k = key("gap-replaced/a");
        put(k);
        GetResponse read = get(k);
        delete(k);
        put(k); // same key, another create revision
        woken(await(read, WaiterWatch.Seen.key(read.getKvs().get(0), false)));
    }

    @Test
    void aPutBetweenTheReadAndTheWatchWakesAWaiterThatWaitsForPutsOnly() {
        ByteSequence k = key("gap-put/a");
        put(k);
        GetResponse read = get(k);
        put(k);
        woken(await(read, WaiterWatch.Seen.key(read.getKvs().get(0), true)));
    }

    @Test
    void oneKeyOfAPrefixGoneBetweenTheReadAndTheWatchWakesTheWaiter() {
        ByteSequence prefix = key("gap-prefix/");
        put(key("gap-prefix/a"));
        put(key("gap-prefix/b"));
        GetResponse read = get(prefix, true);
        delete(key("gap-prefix/a"));
        put(key("gap-prefix/c")); // a newer key does not make up for it
        woken(await(read,
                        new WaiterWatch.Seen.Keys(prefix, read.getHeader().getRevision(), (int) read.getCount())));
    }

    @Test
    void anUnrelatedWriteInTheGapDoesNotWakeTheWaiterAndTheWatchDeliversWhatFollows() {
        ByteSequence k = key("gap-unrelated/a");
        put(k);
        GetResponse read = get(k);
        put(key("gap-unrelated/other")); // the store's revision moves on: the watch starts after the read
        int before = ranges.get();
        StepVerifier.create(await(read, WaiterWatch.Seen.key(read.getKvs().get(0), false)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(300))
                .then(() -> assertThat(ranges.get() - before).as("the gap checked by one read").isEqualTo(1))
                .then(() -> delete(k))
                .expectNext(true)
                .expectComplete()
                .verify(STEP);
    }

    @Test
    void nothingWrittenSinceTheReadSendsNoReadAndTheWatchDeliversTheDeletion() {
        ByteSequence k = key("no-gap/a");
        put(k);
        GetResponse read = get(k);
        int before = ranges.get();
        StepVerifier.create(await(read, WaiterWatch.Seen.key(read.getKvs().get(0), false)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(300))
                .then(() -> assertThat(ranges.get() - before).as("no read: the watch starts at the read's revision").isZero())
                .then(() -> delete(k))
                .expectNext(true)
                .expectComplete()
                .verify(STEP);
    }

    /** Asserts that the wait completes with a change, within the step. */
    private static void woken(Mono<Boolean> wait) {
        StepVerifier.create(wait).expectNext(true).expectComplete().verify(STEP);
    }

    /** @return the wait of a waiter refused by {@code read}, which saw {@code seen} (it says what to watch) */
    private static Mono<Boolean> await(GetResponse read, WaiterWatch.Seen seen) {
        return WaiterWatch.await(client.getWatchClient(), client.getKVClient(), new WaiterWatch.Wait(read.getHeader().getRevision(), seen));
    }

    private static ByteSequence key(String suffix) {
        return EtcdKeys.bytes(etcd.prefix + "/" + suffix);
    }

    private static void put(ByteSequence key) {
        Mono.fromFuture(() -> client.getKVClient().put(key, ByteSequence.EMPTY)).block(STEP);
    }

    private static GetResponse get(ByteSequence key) {
        return get(key, false);
    }

    private static GetResponse get(ByteSequence key, boolean prefix) {
        GetResponse r = Mono.fromFuture(() -> client.getKVClient().get(key,
                io.etcd.jetcd.options.GetOption.builder().isPrefix(prefix).build())).block(STEP);
        for (KeyValue kv : r.getKvs()) {
            assertThat(kv.getCreateRevision()).isPositive();
        }
        return r;
    }

    private static void delete(ByteSequence key) {
        Mono.fromFuture(() -> client.getKVClient().delete(key)).block(STEP);
    }
}
