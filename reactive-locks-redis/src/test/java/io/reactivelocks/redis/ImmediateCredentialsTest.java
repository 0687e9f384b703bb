package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * {@link RedisLockBackend#immediateCredentials}: constant credentials are handed to Lettuce as a provider
 * that answers at once (so a refused handshake is failed on the event loop, see {@link LazyConnectionTest}
 * and {@code RedisBadInputTest}); every other setting of the URI is kept and the application's URI is not
 * touched; credentials that are looked up stay as they are.
 */
class ImmediateCredentialsTest {

    private static RedisCredentials now(RedisURI uri) {
        return ((RedisCredentialsProvider.ImmediateRedisCredentialsProvider) uri.getCredentialsProvider())
                .resolveCredentialsNow();
    }

    @Test
    void constantCredentialsAnswerAtOnceAndTheRestOfTheUriIsKept() {
        RedisURI given = RedisURI.create("redis://locker:s3cret@10.1.2.3:6390/4?timeout=7s&clientName=app");
        RedisURI used = RedisLockBackend.immediateCredentials(given);
        assertThat(used).isNotSameAs(given);
        assertThat(used.getCredentialsProvider()).isInstanceOf(RedisCredentialsProvider.ImmediateRedisCredentialsProvider.class);
        assertThat(now(used).getUsername()).isEqualTo("locker");
        assertThat(now(used).getPassword()).containsExactly("s3cret".toCharArray());
        assertThat(used.getHost()).isEqualTo("10.1.2.3");
        assertThat(used.getPort()).isEqualTo(6390);
        assertThat(used.getDatabase()).isEqualTo(4);
        assertThat(used.getTimeout()).hasSeconds(7);
        assertThat(used.getClientName()).isEqualTo("app");
        assertThat(given.getCredentialsProvider())
                .isNotInstanceOf(RedisCredentialsProvider.ImmediateRedisCredentialsProvider.class);
    }

    @Test
    void aSentinelUriKeepsItsSentinels() {
        RedisURI given = RedisURI.create("redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26380/0#mymaster");
        RedisURI used = RedisLockBackend.immediateCredentials(given);
        assertThat(used.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(used.getSentinels()).extracting(RedisURI::getPort).containsExactly(26379, 26380);
        assertThat(now(used).getPassword()).containsExactly("pw".toCharArray());
    }

    @Test
    void credentialsThatAreLookedUpAndUrisWithoutThemAreLeftAsTheyAre() {
        RedisURI lookedUp = RedisURI.create("redis://10.1.2.3:6390");
        lookedUp.setCredentialsProvider(() -> Mono.fromCallable(() -> RedisCredentials.just("u", "rotated")));
        assertThat(RedisLockBackend.immediateCredentials(lookedUp)).isSameAs(lookedUp);
        RedisURI none = RedisURI.create("redis://10.1.2.3:6390");
        assertThat(RedisLockBackend.immediateCredentials(none)).isSameAs(none);
        assertThat(RedisLockBackend.immediateCredentials(null)).isNull();
    }
}
