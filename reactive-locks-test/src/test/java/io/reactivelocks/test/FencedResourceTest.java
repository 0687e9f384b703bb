package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.test.FencedResource.Write;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FencedResourceTest {

    @Test
    void fencedAcceptsEqualAndHigherTokensAndRejectsLowerOnes() {
        FencedResource r = FencedResource.fenced();
        assertThat(r.isFenced()).isTrue();
        assertThat(r.write("k", 5, "a")).isTrue();
        assertThat(r.write("k", 5, "b")).as("same lease writing again").isTrue();
        assertThat(r.write("k", 7, "c")).isTrue();
        assertThat(r.write("k", 6, "stale")).isFalse();
        assertThat(r.write("other", 1, "x")).as("keys are independent").isTrue();

        assertThat(r.read("k")).contains("c");
        assertThat(r.highestToken("k")).hasValue(7);
        assertThat(r.read("none")).isEmpty();
        assertThat(r.highestToken("none")).isEmpty();
        assertThat(r.writesAccepted()).isEqualTo(4);
        assertThat(r.staleWritesRejected()).isEqualTo(1);
        assertThat(r.staleWritesAccepted()).isZero();
        assertThat(r.writes("k")).extracting(Write::token, Write::value, Write::accepted, Write::stale).containsExactly(
                org.assertj.core.groups.Tuple.tuple(5L, "a", true, false),
                org.assertj.core.groups.Tuple.tuple(5L, "b", true, false),
                org.assertj.core.groups.Tuple.tuple(7L, "c", true, false),
                org.assertj.core.groups.Tuple.tuple(6L, "stale", false, true));
        assertThat(r.writes()).extracting(Write::sequence).containsExactly(1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void unfencedAcceptsEverythingButCountsStaleWrites() {
        FencedResource r = FencedResource.unfenced();
        assertThat(r.isFenced()).isFalse();
        assertThat(r.write("k", 7, "new")).isTrue();
        assertThat(r.write("k", 3, "old")).isTrue();
        assertThat(r.write("k", 7, "again")).isTrue();
        assertThat(r.read("k")).contains("again");
        assertThat(r.highestToken("k")).hasValue(7);
        assertThat(r.writesAccepted()).isEqualTo(3);
        assertThat(r.staleWritesAccepted()).isEqualTo(1);
        assertThat(r.staleWritesRejected()).isZero();
        assertThat(r.writes()).filteredOn(Write::stale).singleElement().extracting(Write::value).isEqualTo("old");
    }

    @Test
    void argumentsAreChecked() {
        FencedResource r = FencedResource.fenced();
        assertThatThrownBy(() -> r.write(null, 1, "v")).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> r.write("k", 1, null)).isInstanceOf(NullPointerException.class).hasMessage("value");
    }

    @Test
    void concurrentWritersNeverLetAStaleWriteThroughAFencedResource() throws Exception {
        FencedResource fenced = FencedResource.fenced();
        FencedResource unfenced = FencedResource.unfenced();
        int threads = 8;
        int perThread = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                futures.add(pool.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < perThread; i++) {
                        long token = (long) i * threads + id;
                        String key = "k" + (i % 4);
                        fenced.write(key, token, "t" + id);
                        unfenced.write(key, token, "t" + id);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long total = (long) threads * perThread;
        assertThat(fenced.writesAccepted() + fenced.staleWritesRejected()).isEqualTo(total);
        assertThat(fenced.staleWritesAccepted()).isZero();
        assertThat(fenced.writes()).hasSize((int) total);
        assertThat(unfenced.writesAccepted()).isEqualTo(total);
        assertThat(fenced.writes()).filteredOn(Write::stale).hasSize((int) fenced.staleWritesRejected())
                .noneMatch(Write::accepted);
        assertThat(unfenced.writes()).filteredOn(Write::stale).hasSize((int) unfenced.staleWritesAccepted())
                .allMatch(Write::accepted);
        // per key, the accepted tokens of the fenced resource never go down, in decision order
        for (String key : List.of("k0", "k1", "k2", "k3")) {
            long highest = Long.MIN_VALUE;
            for (Write w : fenced.writes(key)) {
                if (w.accepted()) {
                    assertThat(w.token()).isGreaterThanOrEqualTo(highest);
                    highest = w.token();
                } else {
                    assertThat(w.token()).isLessThan(highest);
                }
            }
            assertThat(fenced.highestToken(key)).hasValue(highest);
        }
    }
}
