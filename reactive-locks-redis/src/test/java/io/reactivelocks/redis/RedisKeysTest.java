package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The key layout: hash tags, encoding, prefixes. No server needed. */
class RedisKeysTest {

    private final RedisKeys keys = new RedisKeys("rl:");

    @Test
    void leaseTimesAreWholeMillisecondsAtLeastOneAndTheLastOneIsRememberedNotConfused() {
        assertThat(RedisLockBackend.millis(java.time.Duration.ofSeconds(30))).isEqualTo("30000");
        assertThat(RedisLockBackend.millis(java.time.Duration.ofSeconds(30))).isEqualTo("30000");
        assertThat(RedisLockBackend.millis(java.time.Duration.ofMillis(2500))).isEqualTo("2500");
        assertThat(RedisLockBackend.millis(java.time.Duration.ofNanos(1))).isEqualTo("1");
        assertThat(RedisLockBackend.millis(java.time.Duration.ZERO)).isEqualTo("1");
        assertThat(RedisLockBackend.millis(java.time.Duration.ofSeconds(30))).isEqualTo("30000");
    }

    @Test
    void readableNamesStayReadable() {
        assertThat(keys.lock("order:42")).isEqualTo("rl:{order:42}:lock");
        assertThat(keys.fence("order:42")).isEqualTo("rl:{order:42}:fence");
        assertThat(keys.channel("order:42")).isEqualTo("rl:{order:42}:events");
        assertThat(keys.window("a/b-c_d.e~f@g")).isEqualTo("rl:{a/b-c_d.e~f@g}:window");
        assertThat(keys.semaphoreKeys("s{1}")).containsExactly(keys.semaphore("s{1}"), keys.semaphoreTokens("s{1}"),
                "rl:{s%7B1%7D}:semaphore:fence", keys.semaphoreChannel("s{1}"), keys.semaphoreGrantsChannel("s{1}"));
    }

    @Test
    void everyOtherByteIsPercentEncodedSoBracesAndGlobsNeverReachTheKey() {
        assertThat(RedisKeys.tag("orders-42.a_b~c:d/e@f")).as("nothing to escape").isEqualTo("orders-42.a_b~c:d/e@f");
        assertThat(RedisKeys.tag("a b")).as("a space, after safe characters").isEqualTo("a%20b");
        assertThat(RedisKeys.tag("{x}")).isEqualTo("%7Bx%7D");
        assertThat(RedisKeys.tag("*?[]")).isEqualTo("%2A%3F%5B%5D");
        assertThat(RedisKeys.tag("100%")).isEqualTo("100%25");
        assertThat(RedisKeys.tag("é")).isEqualTo("%C3%A9");
        assertThat(RedisKeys.tag("🔒")).isEqualTo("%F0%9F%94%92");
        assertThat(RedisKeys.tag("a\u0000b")).isEqualTo("a%00b");
    }

    @Test
    void theEncodingIsInjectiveEvenForLoneSurrogates() {
        List<String> names = List.of("a", "A", "%41", "a%", "a%25", "{a}", "%7Ba%7D", "\uD800", "?", "\uFFFD",
                "\uD800\uDC00", "\uD800\uD800", "\uDC00\uD800", "é", "e\u0301", "", " ", "%20");
        Set<String> tags = new HashSet<>();
        for (String n : names) {
            assertThat(tags.add(RedisKeys.tag(n))).as("tag of %s is unique", n).isTrue();
        }
        // a lone surrogate encodes to its 3-byte generalized UTF-8 form
        assertThat(RedisKeys.tag("\uD800")).isEqualTo("%ED%A0%80");
    }

    @Test
    void untagInvertsTagForEveryKindOfString() {
        List<String> names = List.of("a", "order:42", "{x}", "100%", "é", "🔒", "a\u0000b", "\uD800", "\uDC00\uD800",
                "\uD800\uDC00", "?", "\uFFFD", "e\u0301", " ", "%20", "c|1|0|0|0|x", "é".repeat(512), "\uDBFF\uDFFF");
        for (String n : names) {
            assertThat(RedisKeys.untag(RedisKeys.tag(n))).as("round trip of %s", n).isEqualTo(n);
        }
        assertThatThrownBy(() -> RedisKeys.untag("%4")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisKeys.untag("%ZZ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void taskQueueKeysShareTheQueuesSlotAndDoNotCollideWithLockKeys() {
        for (String q : List.of("emails", "{x}", "🔒")) {
            int slot = SlotHash.getSlot(RedisKeys.bytes(keys.tasks(q)));
            for (String k : List.of(keys.pending(q), keys.claimed(q), keys.queueFence(q), keys.queueChannel(q))) {
                assertThat(SlotHash.getSlot(RedisKeys.bytes(k))).as(k).isEqualTo(slot);
            }
            assertThat(Set.of(keys.tasks(q), keys.pending(q), keys.claimed(q), keys.queueFence(q), keys.queueChannel(q),
                    keys.lock(q), keys.fence(q), keys.channel(q), keys.grantsChannel(q), keys.window(q))).hasSize(10);
        }
        assertThat(keys.tasks("emails")).isEqualTo("rl:{emails}:queue:tasks");
    }

    @Test
    void allKeysOfANameShareOneClusterSlot() {
        for (String n : List.of("order:42", "{x}", "}{", "a{b}c", "🔒", "x".repeat(1024))) {
            int slot = SlotHash.getSlot(RedisKeys.bytes(keys.lock(n)));
            assertThat(SlotHash.getSlot(RedisKeys.bytes(keys.fence(n)))).isEqualTo(slot);
            assertThat(SlotHash.getSlot(RedisKeys.bytes(keys.window(n)))).isEqualTo(slot);
        }
    }

    @Test
    void aLongNameMakesABoundedKey() {
        String name = "é".repeat(512);
        assertThat(name.getBytes(StandardCharsets.UTF_8)).hasSize(1024);
        assertThat(keys.lock(name)).hasSize("rl:{}:lock".length() + 1024 * 3);
    }

    @Test
    void prefixesWithBracesAreRejectedNamingTheOption() {
        assertThatThrownBy(() -> RedisLockOptions.builder().keyPrefix("a{b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> RedisLockOptions.builder().keyPrefix("}")).hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> RedisLockOptions.builder().keyPrefix(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> RedisLockOptions.builder().fenceTtl(java.time.Duration.ofMillis(10)))
                .hasMessageContaining("fenceTtl");
        assertThat(RedisLockOptions.builder().keyPrefix("").build().keyPrefix()).isEmpty();
    }

    @Test
    void messagesParseIntoEvents() {
        assertThat(PubSubChannels.parse("n", "acquired:17:own:er"))
                .isEqualTo(new io.reactivelocks.spi.LockEvent.Acquired("n", "own:er", 17));
        assertThat(PubSubChannels.parse("n", "released:own:er"))
                .isEqualTo(new io.reactivelocks.spi.LockEvent.Released("n", "own:er", false));
        assertThat(PubSubChannels.parse("n", "acquired:x:y")).isNull();
        assertThat(PubSubChannels.parse("n", "hello")).isNull();
    }
}
