package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdExceptionFactory;
import io.grpc.Status;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.GrantRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Key layout, error mapping and option checks, without a server. */
class EtcdKeysAndErrorsTest {

    @Test
    void everyNameIsOneSegmentOfTheKeyAndDecodesBack() {
        EtcdKeys keys = new EtcdKeys("p");
        for (String name : List.of("a", "a/b", "/", "..", "../../etc", "*", "\u0000", "ünï-锁-🔒", "a/", " ", "\n")) {
            String key = EtcdKeys.string(keys.key(name, "owner"));
            assertThat(key).startsWith("p/").endsWith("/owner");
            String segment = key.substring(2, key.length() - "/owner".length());
            assertThat(segment).as("segment of %s", name).matches("[A-Za-z0-9_-]+");
            assertThat(keys.nameOf(keys.key(name, "owner"))).isEqualTo(name);
            assertThat(EtcdKeys.string(keys.lock(name))).isEqualTo("p/" + segment + "/");
        }
        // a name's range never contains another name's keys
        assertThat(EtcdKeys.string(keys.key("ab", "o"))).doesNotStartWith(EtcdKeys.string(keys.lock("a")));
        assertThat(EtcdKeys.string(keys.key("a/b", "o"))).doesNotStartWith(EtcdKeys.string(keys.lock("a")));
        assertThat(keys.nameOf(EtcdKeys.bytes("other/x/y"))).isNull();
    }

    @Test
    void loneSurrogatesGetKeysApartFromQuestionMarks() {
        // String.getBytes would turn both into "?x": one key for two names
        assertThat(EtcdKeys.encode("\uD800x")).isNotEqualTo(EtcdKeys.encode("?x"));
        assertThat(EtcdKeys.encode("\uDC00")).isNotEqualTo(EtcdKeys.encode("\uD800"));
        EtcdKeys keys = new EtcdKeys("p");
        assertThat(keys.nameOf(keys.key("\uD800x", "o"))).isEqualTo("\uD800x");
    }

    @Test
    void prefixesAreChecked() {
        assertThatThrownBy(() -> EtcdLockOptions.builder().prefix("")).hasMessageContaining("prefix");
        assertThatThrownBy(() -> EtcdLockOptions.builder().prefix("a/")).hasMessageContaining("prefix");
        assertThatThrownBy(() -> EtcdLockOptions.builder().prefix(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("prefix");
        assertThat(EtcdLockOptions.builder().prefix("a/b").build().prefix()).isEqualTo("a/b");
    }

    @Test
    void optionsAreCheckedAndTheSessionTtlFollowsTheLeaseTimeUnlessSet() {
        assertThatThrownBy(() -> EtcdLockOptions.builder().sessionTtl(Duration.ofMillis(999))).hasMessageContaining("sessionTtl");
        assertThatThrownBy(() -> EtcdLockOptions.builder().keepAliveInterval(Duration.ZERO)).hasMessageContaining("keepAliveInterval");
        assertThatThrownBy(() -> EtcdLockOptions.builder().requestTimeout(Duration.ZERO)).hasMessageContaining("requestTimeout");
        assertThatThrownBy(() -> EtcdLockOptions.builder().reconnectInterval(Duration.ofMillis(-1))).hasMessageContaining("reconnectInterval");
        assertThat(EtcdLockOptions.defaults().reconnectInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(EtcdLockOptions.builder().reconnectInterval(Duration.ZERO).build().mutate().build().reconnectInterval())
                .isZero();
        assertThatThrownBy(() -> EtcdConnectionOptions.builder().build()).hasMessageContaining("endpoints");
        assertThatThrownBy(() -> EtcdConnectionOptions.builder().user("", "x")).hasMessageContaining("user");

        EtcdLockOptions o = EtcdLockOptions.builder().sessionTtl(Duration.ofMillis(2500)).build();
        assertThat(o.sessionTtlSeconds()).isEqualTo(3);
        assertThat(o.keepAliveInterval(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(1));
        assertThat(EtcdLockOptions.builder().keepAliveInterval(Duration.ofSeconds(9)).build()
                .keepAliveInterval(Duration.ofSeconds(3))).as("never longer than the TTL").isEqualTo(Duration.ofSeconds(1));
        assertThat(EtcdLockOptions.defaults().isSessionTtlSet()).isFalse();
        assertThat(EtcdLockOptions.defaults().mutate().build().isSessionTtlSet()).isFalse();
        assertThat(o.mutate().build().sessionTtl()).isEqualTo(Duration.ofMillis(2500));

        // EtcdLocks takes the lock client's lease time (at least 1 s) as the session TTL when none is set
        LockOptions lock = LockOptions.builder().leaseTime(Duration.ofSeconds(7)).build();
        assertThat(EtcdLocks.withTtl(EtcdLockOptions.defaults(), lock).sessionTtl()).isEqualTo(Duration.ofSeconds(7));
        assertThat(EtcdLocks.withTtl(o, lock).sessionTtl()).isEqualTo(Duration.ofMillis(2500));
        LockOptions shortLease = LockOptions.builder().leaseTime(Duration.ofMillis(300)).build();
        assertThat(EtcdLocks.withTtl(EtcdLockOptions.defaults(), shortLease).sessionTtl()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void grpcCodesDecideWhetherAFailureIsTransient() {
        assertThat(EtcdErrors.isTransient(Status.UNAVAILABLE.asRuntimeException())).isTrue();
        assertThat(EtcdErrors.isTransient(Status.DEADLINE_EXCEEDED.asRuntimeException())).isTrue();
        assertThat(EtcdErrors.isTransient(EtcdExceptionFactory.newEtcdException(ErrorCode.UNAVAILABLE, "etcdserver: no leader"))).isTrue();
        assertThat(EtcdErrors.isTransient(new CompletionException(Status.UNAVAILABLE.asRuntimeException()))).isTrue();
        assertThat(EtcdErrors.isTransient(new TimeoutException())).isTrue();
        assertThat(EtcdErrors.isTransient(new IOException("reset"))).isTrue();

        assertThat(EtcdErrors.isTransient(Status.UNAUTHENTICATED.asRuntimeException())).isFalse();
        assertThat(EtcdErrors.isTransient(Status.PERMISSION_DENIED.asRuntimeException())).isFalse();
        assertThat(EtcdErrors.isTransient(Status.INVALID_ARGUMENT.asRuntimeException())).isFalse();
        assertThat(EtcdErrors.isTransient(EtcdExceptionFactory.newEtcdException(ErrorCode.PERMISSION_DENIED, "denied"))).isFalse();
        assertThat(EtcdErrors.isTransient(EtcdExceptionFactory.newClosedLeaseClientException())).isFalse();
        // jetcd wraps a failed Authenticate call in UNAUTHENTICATED: a wrong password is permanent, an unreachable server not
        assertThat(EtcdErrors.isTransient(Status.UNAUTHENTICATED.withCause(
                Status.INVALID_ARGUMENT.withDescription("authentication failed").asRuntimeException()).asRuntimeException())).isFalse();
        assertThat(EtcdErrors.isTransient(Status.UNAUTHENTICATED.withCause(
                Status.UNAVAILABLE.asRuntimeException()).asRuntimeException())).isTrue();

        assertThat(EtcdErrors.isLeaseNotFound(EtcdExceptionFactory.newEtcdException(ErrorCode.NOT_FOUND, "lease not found"))).isTrue();
        assertThat(EtcdErrors.isLeaseNotFound(Status.UNAVAILABLE.asRuntimeException())).isFalse();

        assertThat(EtcdErrors.map("n", "acquire", new CompletionException(Status.UNAVAILABLE.asRuntimeException())))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("lock 'n'").hasMessageContaining("UNAVAILABLE");
        assertThat(EtcdErrors.map(null, "acquire", new TimeoutException())).hasMessageContaining("within the request timeout");
    }

    /** Fails when a jetcd upgrade hides the channel: clients would then reconnect on gRPC's backoff only. */
    @Test
    void theReconnectReadsTheChannelOfJetcdsClient() {
        io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder().endpoints("http://127.0.0.1:2379").build();
        try {
            assertThat(ChannelReconnect.channelOf(client)).as("the gRPC channel of jetcd's client is found").isNotNull();
        } finally {
            client.close();
        }
    }

    /**
     * The backend follows its client's channel from its first operation: when the channel fails it
     * arms one reconnect timer of the interval (counted, never run, by a {@link HoldingScheduler});
     * with a zero interval it leaves reconnecting to gRPC and arms none.
     */
    @Test
    void theBackendArmsAReconnectTimerWhenTheChannelFailsUnlessTheIntervalIsZero() {
        Duration interval = Duration.ofMillis(777);
        assertThat(reconnectTimersAfterAFailedAcquire(interval, interval)).as("timers of the interval").isEqualTo(1);
        assertThat(reconnectTimersAfterAFailedAcquire(Duration.ZERO, Duration.ZERO)).as("zero: left to gRPC").isZero();
    }

    /** @return the timers of delay {@code held} armed within a while after an acquire failed (nothing listens on its port) */
    private static int reconnectTimersAfterAFailedAcquire(Duration interval, Duration held) {
        io.etcd.jetcd.Client client = EtcdTestSupport.client("127.0.0.1", 9);
        HoldingScheduler timers = new HoldingScheduler(held);
        EtcdLockBackend backend = EtcdLockBackend.create(client, EtcdLockOptions.builder().reconnectInterval(interval)
                .requestTimeout(Duration.ofSeconds(1)).scheduler(timers).build());
        try {
            StepVerifier.create(backend.tryGrant(new GrantRequest("n", "owner", Duration.ofSeconds(2), false, LockClock.system())))
                    .expectError()
                    .verify(Duration.ofSeconds(10));
            if (!interval.isZero()) {
                await().atMost(Duration.ofSeconds(10)).until(() -> timers.held() >= 1);
            }
            int[] seen = new int[1];
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(10)).until(() -> {
                int now = timers.held();
                boolean same = now == seen[0];
                seen[0] = now;
                return same;
            });
            return timers.held();
        } finally {
            backend.close().block(Duration.ofSeconds(10));
            client.close();
            timers.dispose();
        }
    }
}
