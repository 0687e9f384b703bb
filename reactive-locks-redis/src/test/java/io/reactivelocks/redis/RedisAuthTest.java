package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Authentication goes through Lettuce's {@link RedisURI}; failures are permanent errors. */
class RedisAuthTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static void roundTrip(String url) {
        RedisClient client = RedisClient.create();
        LockStore locksStore = RedisLocks.connect(client, RedisLockOptions.builder().uri(RedisURI.create(url)).build());
        LockClient locks = locksStore.locks(LockOptions.defaults());
        try {
            Lease lease = locks.acquire("auth-" + UUID.randomUUID()).block(STEP);
            assertThat(lease.token()).isPositive();
            lease.release().block(STEP);
        } finally {
            locksStore.close().block(STEP);
            client.shutdown();
        }
    }

    private static void wrongCredentialsFailPermanently(String url) {
        RedisClient client = RedisClient.create();
        LockStore locksStore = RedisLocks.connect(client, RedisLockOptions.builder().uri(RedisURI.create(url)).build());
        LockClient locks = locksStore.locks(LockOptions.builder().waitTimeout(Duration.ofSeconds(5)).build());
        try {
            // a waiting acquire: the server's WRONGPASS/NOAUTH ends the wait at once as a permanent error
            // (a handshake refusal Lettuce reports as "connection closed prematurely" is connected once
            // more at once, see LazyConnectionTest)
            StepVerifier.create(locks.acquire("auth"))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(LockBackendException.class);
                        assertThat(((LockBackendException) e).isTransient()).as("wrong credentials are not transient").isFalse();
                    })
                    .verify(STEP);
        } finally {
            locksStore.close().block(STEP);
            client.shutdown();
        }
    }

    @Test
    void aPasswordProtectedServer() {
        try (RedisServer server = RedisServer.builder().password("s3cret-" + UUID.randomUUID()).start()) {
            roundTrip(server.url());
            wrongCredentialsFailPermanently("redis://:wrong@" + server.host() + ":" + server.port());
            wrongCredentialsFailPermanently("redis://" + server.host() + ":" + server.port()); // none at all
        }
    }

    @Test
    void anAclUser() {
        try (RedisServer server = RedisServer.builder().user("locker", "pw-" + UUID.randomUUID()).start()) {
            roundTrip(server.url());
            wrongCredentialsFailPermanently("redis://locker:wrong@" + server.host() + ":" + server.port());
        }
    }

    @Test
    void anAclUserWithoutScriptPermissionGetsAPermanentError() {
        try (RedisServer server = RedisServer.start()) {
            String password = "pw-" + UUID.randomUUID();
            RedisClient admin = RedisClient.create(RedisURI.create(server.url()));
            try (var c = admin.connect()) {
                c.sync().aclSetuser("noscript", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword(password)
                        .allKeys().allChannels().allCommands()
                        .removeCommand(io.lettuce.core.protocol.CommandType.EVALSHA)
                        .removeCommand(io.lettuce.core.protocol.CommandType.EVAL));
            } finally {
                admin.shutdown();
            }
            RedisURI uri = RedisURI.builder().withHost(server.host()).withPort(server.port())
                    .withAuthentication("noscript", password).build();
            RedisClient client = RedisClient.create();
            LockStore locksStore = RedisLocks.connect(client, RedisLockOptions.builder().uri(uri).build());
            LockClient locks = locksStore.locks(LockOptions.builder().waitTimeout(Duration.ofSeconds(5)).build());
            try {
                // a waiting acquire: a permanent error ends it at once instead of waiting out the timeout
                StepVerifier.create(locks.acquire("noperm"))
                        .expectErrorSatisfies(e -> {
                            assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("NOPERM");
                            assertThat(((LockBackendException) e).isTransient()).as("NOPERM is not transient").isFalse();
                        })
                        .verify(Duration.ofSeconds(3));
            } finally {
                locksStore.close().block(STEP);
                client.shutdown();
            }
        }
    }
}
