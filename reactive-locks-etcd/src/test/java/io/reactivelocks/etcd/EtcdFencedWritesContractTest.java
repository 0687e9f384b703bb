package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The fenced-writes contract against a real etcd, plus the etcd specifics: one key under the
 * prefix holding {@code <fence>\n<value>} and nothing else written, the tombstone a delete leaves,
 * exact comparison over the whole {@code long} range, and a {@code close()} that leaves the
 * application's client open.
 */
class EtcdFencedWritesContractTest extends FencedWritesContract {

    private static EtcdTestSupport etcd;
    private final List<Client> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    /** The clients are the test's (as an application's would be): closing the values leaves them open. */
    @AfterEach
    void closeClients() {
        clients.forEach(Client::close);
        clients.clear();
    }

    private Client newClient() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        clients.add(c);
        return c;
    }

    /**
     * The fixture's options but the default request timeout (5 s): the fixture's 1 s is sized for
     * session requests, and here it bounds a whole compare-and-set, retries included, of 16 writers
     * at once on a loaded machine.
     */
    private static EtcdLockOptions fencedOptions(String prefix) {
        return etcd.options().mutate().prefix(prefix).requestTimeout(EtcdLockOptions.defaults().requestTimeout()).build();
    }

    @Override
    protected FencedValues newValues() {
        return EtcdFencedValues.create(newClient(), fencedOptions(etcd.prefix));
    }

    @Test
    void aValueIsOneKeyUnderThePrefixAndNothingElseIsWritten() {
        String prefix = "rlfenced-" + UUID.randomUUID().toString().substring(0, 8);
        Client c = newClient();
        FencedValues v = EtcdFencedValues.create(c, fencedOptions(prefix));
        String k = key("layout");
        long before = revision(c);
        Mono<Boolean> write = v.write(k, 7, "x\ny");
        assertThat(revision(c)).as("nothing is sent before subscribe").isEqualTo(before);
        assertThat(write.block(STEP)).isTrue();
        assertThat(revision(c)).as("one put, nowhere else").isEqualTo(before + 1);

        String expected = prefix + "-fenced/" + LockNames.base64url(k);
        assertThat(etcd.keys(prefix)).as("every key under the prefix").containsExactly(expected);
        KeyValue kv = get(c, expected);
        assertThat(kv.getValue().toString(StandardCharsets.UTF_8)).isEqualTo("7\nx\ny");
        assertThat(kv.getLease()).as("application data: no lease").isZero();
        assertThat(kv.getVersion()).isEqualTo(1);

        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("x\ny", 7));
        assertThat(v.write(k, 6, "old").block(STEP)).isFalse();
        assertThat(revision(c)).as("a read and a refused write write nothing").isEqualTo(before + 1);

        assertThat(v.delete(k, 8).block(STEP)).isTrue();
        assertThat(etcd.keys(prefix)).containsExactly(expected);
        assertThat(get(c, expected).getValue().toString(StandardCharsets.UTF_8)).as("the tombstone: the fence alone").isEqualTo("8");
        assertThat(revision(c)).isEqualTo(before + 2);
        Mono.fromFuture(() -> c.getKVClient().delete(ByteSequence.from(expected, StandardCharsets.UTF_8))).block(STEP);
    }

    /**
     * Writers with one token are all admitted, so every one that loses a transaction to another
     * must go round again: each {@code true} is exactly one put, none lost, none doubled.
     */
    @Test
    void writersThatLoseTheTransactionGoRoundAgainAndEachAcceptedWriteIsOnePut() {
        List<FencedValues> writers = List.of(values(), values(), values());
        String k = key("rounds");
        for (FencedValues w : writers) {
            w.read(k).block(STEP);
        }
        Client c = newClient();
        long before = revision(c);
        List<Boolean> results = Flux.range(0, 30)
                .flatMap(i -> writers.get(i % writers.size()).write(k, 5, "v" + i).subscribeOn(Schedulers.parallel()), 16)
                .collectList().block(STEP);
        assertThat(results).hasSize(30).containsOnly(true);
        assertThat(revision(c)).as("one put per accepted write").isEqualTo(before + 30);
        assertThat(get(c, ((EtcdFencedValues) writers.get(0)).key(k).toString(StandardCharsets.UTF_8)).getVersion())
                .isEqualTo(30);
        FencedValue last = writers.get(1).read(k).block(STEP);
        assertThat(last.fence()).isEqualTo(5);
        assertThat(last.value()).startsWith("v");
    }

    @Test
    void aDeleteOfAKeyNeverWrittenLeavesItsFence() {
        FencedValues v = values();
        String k = key("tombstone");
        assertThat(v.delete(k, 5).block(STEP)).isTrue();
        assertThat(v.read(k).blockOptional(STEP)).isEmpty();
        assertThat(v.write(k, 4, "stale").block(STEP)).isFalse();
        assertThat(v.delete(k, 4).block(STEP)).isFalse();
        assertThat(v.write(k, 5, "a").block(STEP)).as("the same token as the delete").isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 5));
    }

    @Test
    void tokensAreComparedExactlyOverTheWholeLongRange() {
        FencedValues v = values();
        String k = key("long");
        assertThat(v.write(k, Long.MAX_VALUE - 1, "a").block(STEP)).isTrue();
        assertThat(v.write(k, Long.MAX_VALUE - 2, "b").block(STEP)).as("differs beyond 2^53").isFalse();
        assertThat(v.write(k, Long.MAX_VALUE, "c").block(STEP)).isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("c", Long.MAX_VALUE));
        String n = key("negative");
        assertThat(v.write(n, -10, "a").block(STEP)).isTrue();
        assertThat(v.write(n, -11, "b").block(STEP)).isFalse();
        assertThat(v.write(n, -9, "c").block(STEP)).isTrue();
        assertThat(v.write(n, 0, "d").block(STEP)).isTrue();
        assertThat(v.write(n, -1, "e").block(STEP)).isFalse();
        assertThat(v.read(n).block(STEP)).isEqualTo(new FencedValue("d", 0));
    }

    @Test
    void aKeyHoldingSomethingElseFailsWithABackendError() {
        Client c = newClient();
        EtcdFencedValues v = EtcdFencedValues.create(c, fencedOptions(etcd.prefix));
        String k = key("foreign");
        Mono.fromFuture(() -> c.getKVClient().put(v.key(k), ByteSequence.from("not a fence", StandardCharsets.UTF_8),
                PutOption.DEFAULT)).block(STEP);
        StepVerifier.create(v.read(k))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .hasMessageContaining(k).hasMessageContaining("not a fenced value")
                        .satisfies(b -> assertThat(((LockBackendException) b).isTransient()).isFalse()))
                .verify(STEP);
        StepVerifier.create(v.write(k, 1, "a"))
                .expectError(LockBackendException.class)
                .verify(STEP);
    }

    @Test
    void closeLeavesTheClientOpenAndIsIdempotent() {
        Client c = newClient();
        EtcdFencedValues v = EtcdFencedValues.create(c, fencedOptions(etcd.prefix));
        String k = key("close");
        assertThat(v.write(k, 1, "a").block(STEP)).isTrue();
        v.close().block(STEP);
        v.close().block(STEP);
        assertThat(get(c, v.key(k).toString(StandardCharsets.UTF_8)))
                .as("the application's client still answers").isNotNull();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 1));
    }

    private static long revision(Client c) {
        return Mono.fromFuture(() -> c.getKVClient().get(ByteSequence.from(new byte[] {0}))).block(STEP)
                .getHeader().getRevision();
    }

    private static KeyValue get(Client c, String key) {
        List<KeyValue> kvs = Mono.fromFuture(() -> c.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8),
                GetOption.DEFAULT)).block(STEP).getKvs();
        assertThat(kvs).as("key %s", key).hasSize(1);
        return kvs.get(0);
    }
}
