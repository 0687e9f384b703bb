package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * etcd with authentication on: a root user, and a user whose role may read and write only this
 * test's prefix. The right password works; a wrong password, a user without permission and no
 * credentials at all fail fast with a non-transient {@link LockBackendException} — also for a
 * waiting acquire, which must not retry what cannot succeed.
 */
class EtcdAuthTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final String PREFIX = "rlauth";
    private static final LockOptions OPTIONS = LockOptions.builder()
            // 5 s: a session's first request also connects and authenticates (bcrypt on the server), slow on a loaded machine
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5)).build();

    private static EtcdServer server;
    private static Client root;

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @BeforeAll
    static void enableAuth() throws Exception {
        server = EtcdServer.start();
        try (Client admin = EtcdTestSupport.client(server.host(), server.port())) {
            Auth auth = admin.getAuthClient();
            auth.userAdd(bytes("root"), bytes("rootpw")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("locker")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bytes("locker"), bytes(PREFIX + "/"), bytes(PREFIX + "0"), Permission.Type.READWRITE)
                    .get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("locker"), bytes("lockerpw")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("locker"), bytes("locker")).get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("stranger"), bytes("strangerpw")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
        root = connection("root", "rootpw").connect();
    }

    @AfterAll
    static void stopServer() {
        if (root != null) {
            root.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static EtcdConnectionOptions connection(String user, String password) {
        EtcdConnectionOptions.Builder b = EtcdConnectionOptions.builder().endpoints(server.url());
        if (user != null) {
            b.user(user, password);
        }
        return b.build();
    }

    private static LockStore session(String user, String password) {
        return EtcdLocks.connect(connection(user, password), EtcdLockOptions.builder().prefix(PREFIX).build());
    }

    private static long keysUnderPrefix() throws Exception {
        return root.getKVClient().get(bytes(PREFIX + "/"), GetOption.builder().isPrefix(true).withCountOnly(true).build())
                .get(10, TimeUnit.SECONDS).getCount();
    }

    @Test
    void theRightPasswordTakesLocks() throws Exception {
        LockStore session = session("locker", "lockerpw");
        LockClient locks = session.locks(OPTIONS);
        try {
            Lease lease = locks.acquire("authorised").block(STEP);
            assertThat(lease).isNotNull();
            assertThat(keysUnderPrefix()).isEqualTo(1);
            lease.release().block(STEP);
            assertThat(keysUnderPrefix()).isZero();
        } finally {
            session.close().block(STEP);
        }
    }

    @Test
    void aWrongPasswordFailsFastAndNotTransiently() {
        assertRefused(session("locker", "wrong"));
    }

    @Test
    void aUserWithoutPermissionOnThePrefixIsRefused() {
        assertRefused(session("stranger", "strangerpw"));
    }

    @Test
    void noCredentialsAreRefused() {
        assertRefused(session(null, null));
    }

    private static void assertRefused(LockStore session) {
        LockClient locks = session.locks(OPTIONS);
        try {
            StepVerifier.create(locks.tryAcquire("refused"))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                            .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).as("transient: %s", x).isFalse()))
                    .verify(STEP);
            // a waiting acquire gives up at once too: retrying cannot help
            StepVerifier.create(locks.acquire("refused"))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                            .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isFalse()))
                    .verify(STEP);
        } finally {
            session.close().onErrorResume(e -> Mono.empty()).block(STEP);
        }
    }
}
