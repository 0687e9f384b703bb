package io.reactivelocks.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * B3's raw driver handoff ({@link RawHandoffs}) against each real server: it is a lock (never two
 * holders, every waiter granted once), and a short B3 chain completes with the server's request
 * counter moving. MariaDB's is exercised by {@link MariaDbBenchTest}. No figure is asserted.
 */
class RawHandoffsTest {

    private static final int WAITERS = 8;

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres", "etcd", "zookeeper"})
    @Timeout(120)
    void oneHolderAtATimeAndAChainCompletes(String key) {
        System.setProperty("java.awt.headless", "true");
        BackendBench bench = switch (key) {
            case "redis" -> new RedisBench();
            case "postgres" -> new PostgresBench();
            case "etcd" -> new EtcdBench();
            default -> new ZooKeeperBench();
        };
        Function<BackendBench, Contender> make = b -> switch (key) {
            case "redis" -> new RawHandoffs.Redis(((RedisBench) b).url());
            case "postgres" -> new RawHandoffs.Postgres(((PostgresBench) b).pool(), ((PostgresBench) b).unpooled());
            case "etcd" -> new RawHandoffs.Etcd(((EtcdBench) b).url());
            default -> new RawHandoffs.ZooKeeper(((ZooKeeperBench) b).connectString());
        };
        try {
            bench.start();
            try (Contender raw = make.apply(bench)) {
                assertThat(raw.role).isEqualTo(Role.RAW_HANDOFF);
                assertThat(raw.cycles()).as("B3 only").isFalse();
                exclusive(raw);
                Handoff.Chain chain = Handoff.chain(bench, raw, WAITERS);
                assertThat(chain.complete()).as("chain: %s", chain.error()).isTrue();
                assertThat(chain.delta().counted()).as("requests counted by the server").isPositive();
            }
        } finally {
            bench.close();
        }
    }

    /** A holder and {@link #WAITERS} waiters on one name; each grantee checks it is alone, then releases after a while. */
    private static void exclusive(Contender raw) {
        String name = "exclusive." + System.nanoTime();
        raw.prepare(WAITERS + 1);
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        List<Disposable> waiters = new ArrayList<>();
        try {
            Contender.Held first = raw.acquireWaiting(name, 0).block(Duration.ofSeconds(30));
            holders.incrementAndGet();
            List<Mono<Void>> done = new ArrayList<>();
            for (int i = 1; i <= WAITERS; i++) {
                done.add(raw.acquireWaiting(name, i).flatMap(h -> {
                    if (holders.incrementAndGet() != 1) {
                        overlaps.add("two holders at grant " + grants.get());
                    }
                    grants.incrementAndGet();
                    return Mono.delay(Duration.ofMillis(5)).then(Mono.defer(() -> {
                        holders.decrementAndGet();
                        return h.release();
                    }));
                }).cache());
            }
            done.forEach(m -> waiters.add(m.subscribe()));
            Handoff.sleep(Duration.ofMillis(300));
            assertThat(grants).as("granted while held").hasValue(0);
            holders.decrementAndGet();
            first.release().block(Duration.ofSeconds(10));
            Mono.when(done).block(Duration.ofSeconds(60));
            assertThat(grants).hasValue(WAITERS);
            assertThat(overlaps).isEmpty();
        } finally {
            waiters.forEach(Disposable::dispose);
            raw.finish();
        }
    }
}
