package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The contract every {@link FencedValues} resource passes, on the one fencing rule: a lower token
 * is refused, an equal one (the same grant writing again) accepted, a higher one accepted and
 * raising the fence. A store's test extends this class and supplies {@link #newValues()}: each call
 * returns an independent resource (its own connections) to the same server.
 */
public abstract class FencedWritesContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<FencedValues> opened = new ArrayList<>();

    /** @return a new, independent resource (its own connections) to the server under test */
    protected abstract FencedValues newValues();

    /** @return a new resource over {@link #newValues()}, closed after the test */
    protected FencedValues values() {
        FencedValues v = newValues();
        opened.add(v);
        return v;
    }

    /**
     * @param prefix a readable prefix
     * @return a key unique to this run
     */
    protected static String key(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @AfterEach
    void closeValues() {
        for (FencedValues v : opened) {
            v.close().block(STEP);
        }
        opened.clear();
    }

    @Test
    void aFirstWriteIsAcceptedAndReadBackWithItsFence() {
        FencedValues v = values();
        String k = key("first");
        assertThat(v.read(k).blockOptional(STEP)).isEmpty();
        assertThat(v.write(k, 5, "a").block(STEP)).isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 5));
    }

    @Test
    void aLowerTokenIsRefusedAndChangesNothing() {
        FencedValues v = values();
        String k = key("lower");
        assertThat(v.write(k, 10, "a").block(STEP)).isTrue();
        assertThat(v.write(k, 9, "b").block(STEP)).isFalse();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 10));
    }

    @Test
    void anEqualTokenIsTheSameGrantAndIsAccepted() {
        FencedValues v = values();
        String k = key("equal");
        assertThat(v.write(k, 10, "a").block(STEP)).isTrue();
        assertThat(v.write(k, 10, "b").block(STEP)).as("a second write under the same lease").isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("b", 10));
    }

    @Test
    void aHigherTokenIsAcceptedAndRaisesTheFence() {
        FencedValues v = values();
        String k = key("higher");
        assertThat(v.write(k, 10, "a").block(STEP)).isTrue();
        assertThat(v.write(k, 11, "b").block(STEP)).isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("b", 11));
        assertThat(v.write(k, 10, "c").block(STEP)).isFalse();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("b", 11));
    }

    @Test
    void concurrentWritersWithMixedTokensEndWithTheHighest() {
        List<FencedValues> writers = List.of(values(), values(), values());
        String k = key("race");
        for (FencedValues w : writers) { // connect first: the race is about writes, not connection set-up
            w.read(k).block(STEP);
        }
        List<Long> tokens = LongStream.rangeClosed(1, 40).boxed().collect(Collectors.toCollection(ArrayList::new));
        Collections.shuffle(tokens);
        List<Boolean> results = Flux.range(0, tokens.size())
                .flatMap(i -> writers.get(i % writers.size()).write(k, tokens.get(i), "v" + tokens.get(i))
                        .subscribeOn(Schedulers.parallel()), 16)
                .collectList().block(STEP);
        assertThat(results).contains(true);
        assertThat(writers.get(0).read(k).block(STEP)).isEqualTo(new FencedValue("v40", 40));
        assertThat(writers.get(1).write(k, 39, "late").block(STEP)).isFalse();
    }

    @Test
    void aDeleteIsFencedAndKeepsTheFence() {
        FencedValues v = values();
        String k = key("delete");
        assertThat(v.write(k, 10, "a").block(STEP)).isTrue();
        assertThat(v.delete(k, 9).block(STEP)).isFalse();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("a", 10));
        assertThat(v.delete(k, 10).block(STEP)).isTrue();
        assertThat(v.read(k).blockOptional(STEP)).isEmpty();
        assertThat(v.write(k, 9, "stale").block(STEP)).as("an older writer cannot bring the value back").isFalse();
        assertThat(v.write(k, 12, "b").block(STEP)).isTrue();
        assertThat(v.read(k).block(STEP)).isEqualTo(new FencedValue("b", 12));
    }

    @Test
    void keysAreIndependentAndKeptAsData() {
        FencedValues v = values();
        String base = key("keys");
        List<String> keys = List.of(base + "a", base + "b", base + "/../x", base + "{tag}", base + "*?[]", base + " ünï ");
        long token = 100;
        for (String k : keys) {
            assertThat(v.write(k, token--, "value of " + k).block(STEP)).as("key %s", k).isTrue();
        }
        token = 100;
        for (String k : keys) {
            assertThat(v.read(k).block(STEP)).as("key %s", k).isEqualTo(new FencedValue("value of " + k, token--));
        }
        String odd = "multi\nline ünïcödé \u2603 and a NUL \u0000 in it";
        assertThat(v.write(base + "odd", 1, odd).block(STEP)).isTrue();
        assertThat(v.read(base + "odd").block(STEP)).isEqualTo(new FencedValue(odd, 1));
        assertThat(v.write(base + "empty", 1, "").block(STEP)).isTrue();
        assertThat(v.read(base + "empty").block(STEP)).isEqualTo(new FencedValue("", 1));
    }

    @Test
    void badArgumentsFailAtCallTime() {
        FencedValues v = values();
        assertThatThrownBy(() -> v.write(null, 1, "a")).isInstanceOf(NullPointerException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> v.write("", 1, "a")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> v.write("x".repeat(1025), 1, "a")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> v.write("k", 1, null)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
        assertThatThrownBy(() -> v.read(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> v.delete("", 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    }
}
