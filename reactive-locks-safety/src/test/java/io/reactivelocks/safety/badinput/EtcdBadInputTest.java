package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.assertBlackholeTimesOutAndLeavesNothingLocked;
import static io.reactivelocks.safety.badinput.BadInput.assertFree;
import static io.reactivelocks.safety.badinput.BadInput.assertRefusedTransiently;
import static io.reactivelocks.safety.badinput.BadInput.backendErrorWithin;
import static io.reactivelocks.safety.badinput.BadInput.closedPort;
import static io.reactivelocks.safety.badinput.BadInput.rejectedAtCall;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdConnectionOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.EtcdServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad etcd configurations and a bad etcd: endpoint URLs, credentials, permissions, addresses, TLS
 * files, the key prefix and session options. One server for the class, with authentication on: a
 * {@code root} user, a {@code locker} user that may use only this class's prefix, and a
 * {@code stranger} without any role.
 */
class EtcdBadInputTest {

    private static final String PREFIX = "badinput-etcd";

    /**
     * With authentication on, every new jetcd client first authenticates (etcd checks a bcrypt
     * hash): a few hundred milliseconds on a busy machine. The request timeout leaves room for that.
     */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(3);

    private static final io.reactivelocks.LockOptions OPTIONS = Clients.OPTIONS.mutate().requestTimeout(REQUEST_TIMEOUT).build();

    private static EtcdServer server;
    private static LockStore goodSession;
    private static LockClient good;

    private final Clients clients = new Clients();

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    @BeforeAll
    static void startServerWithAuthentication() throws Exception {
        server = EtcdServer.start();
        try (Client admin = Clients.etcdDriver(server.url())) {
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
        goodSession = EtcdLocks.connect(connection(server.url(), "locker", "lockerpw"), options());
        good = Clients.warm(goodSession.locks(OPTIONS));
    }

    @AfterAll
    static void stopServer() {
        BadInput.close(good);
        if (goodSession != null) {
            goodSession.close().block(BadInput.STEP);
        }
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private static EtcdConnectionOptions connection(String endpoint, String user, String password) {
        EtcdConnectionOptions.Builder b = EtcdConnectionOptions.builder().endpoints(endpoint).connectTimeout(Duration.ofSeconds(2));
        if (user != null) {
            b.user(user, password);
        }
        return b.build();
    }

    private static EtcdLockOptions options() {
        return EtcdLockOptions.builder().prefix(PREFIX).sessionTtl(Duration.ofSeconds(5)).requestTimeout(REQUEST_TIMEOUT).build();
    }

    private LockClient lockClient(EtcdConnectionOptions connection) {
        return clients.track(EtcdLocks.connect(connection, options())).locks(OPTIONS);
    }

    // ------------------------------------------------------------------ endpoints

    @Test
    void malformedEndpointUrlsAreRejectedAtCall() {
        for (String bad : List.of("not a url", "localhost:2379", "127.0.0.1:2379", "ftp://127.0.0.1:2379", "http://",
                "http://:2379", "http://127.0.0.1:99999", "http://127.0.0.1:abc", "unix:///var/run/etcd.sock")) {
            rejectedAtCall(IllegalArgumentException.class, () -> EtcdConnectionOptions.builder().endpoints(bad),
                    "endpoints", bad.trim());
        }
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdConnectionOptions.builder().endpoints("  "),
                "endpoints must not contain a blank entry");
        rejectedAtCall(NullPointerException.class, () -> EtcdConnectionOptions.builder().endpoints((String) null), "endpoints");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdConnectionOptions.builder().build(),
                "endpoints must name at least one etcd server");
        // https:// without any TLS setting: jetcd would silently speak plain text to it
        rejectedAtCall(IllegalArgumentException.class,
                () -> EtcdConnectionOptions.builder().endpoints("https://127.0.0.1:2379").build(),
                "endpoints use https:// but no TLS is configured");
        // the accepted forms
        assertThat(EtcdConnectionOptions.builder().endpoints("http://127.0.0.1", " HTTP://[::1]:2379 ", "http://etcd-1:2379/")
                .build().endpoints()).hasSize(3);
    }

    @Test
    void missingTlsFilesAreRejectedWhenTheClientIsBuilt() {
        EtcdConnectionOptions tls = EtcdConnectionOptions.builder().endpoints("https://127.0.0.1:2379")
                .trustCertificates(Path.of("/nonexistent/ca.pem")).build();
        rejectedAtCall(IllegalArgumentException.class, tls::connect, "could not read the TLS files for etcd", "/nonexistent/ca.pem");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLocks.connect(tls, options()),
                "could not read the TLS files");
    }

    // ------------------------------------------------------------------ credentials

    @Test
    void wrongPasswordIsAPermanentErrorThatEndsEvenAnUnboundedWait() {
        LockClient locks = lockClient(connection(server.url(), "locker", "wrong"));
        // the session (one etcd lease per backend) is what fails first: the message names it and the cause
        backendErrorWithin(locks.tryAcquire("wrongpass"), false, REQUEST_TIMEOUT,
                "etcd failed acquire of lock 'wrongpass'", "session lease grant",
                "authentication failed, invalid user ID or password");
        backendErrorWithin(locks.acquire("wrongpass"), false, REQUEST_TIMEOUT, "authentication failed");
        assertFree(good, "wrongpass");
    }

    @Test
    void userWithoutPermissionOnThePrefixIsAPermanentError() {
        LockClient locks = lockClient(connection(server.url(), "stranger", "strangerpw"));
        backendErrorWithin(locks.tryAcquire("stranger"), false, REQUEST_TIMEOUT, "etcd failed acquire of lock 'stranger'",
                "PERMISSION_DENIED", "permission denied");
        backendErrorWithin(locks.acquire("stranger"), false, REQUEST_TIMEOUT, "permission denied");
    }

    @Test
    void emptyUserOrNullPasswordIsRejectedAtCall() {
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdConnectionOptions.builder().user("", "pw"), "user must not be empty");
        rejectedAtCall(NullPointerException.class, () -> EtcdConnectionOptions.builder().user("u", null), "password");
        rejectedAtCall(NullPointerException.class, () -> EtcdConnectionOptions.builder().user(null, "pw"), "user");
    }

    // ------------------------------------------------------------------ addresses

    @Test
    void closedPortIsATransientErrorWithinTheRequestTimeout() throws IOException {
        assertRefusedTransiently(lockClient(connection("http://127.0.0.1:" + closedPort(), "locker", "lockerpw")), OPTIONS,
                "etcd", "lock 'refused'");
    }

    @Test
    void blackholedServerIsATransientTimeoutAndLeavesNothingLocked() {
        try (FaultProxy proxy = FaultProxy.start(server.host(), server.port())) {
            LockClient locks = Clients.warm(lockClient(connection("http://" + proxy.host() + ":" + proxy.port(), "locker",
                    "lockerpw")));
            assertBlackholeTimesOutAndLeavesNothingLocked(proxy, locks, OPTIONS, good, "etcd");
        }
    }

    // ------------------------------------------------------------------ options

    @Test
    void emptyTrailingSlashOrNullPrefixIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLockOptions.builder().prefix(""), "prefix must not be empty");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLockOptions.builder().prefix("app/"),
                "prefix must not end with '/'", "app/");
        rejectedAtCall(NullPointerException.class, () -> EtcdLockOptions.builder().prefix(null), "prefix");
    }

    @Test
    void outOfRangeSessionOptionsAreRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLockOptions.builder().sessionTtl(Duration.ofMillis(500)),
                "sessionTtl must be at least 1 s", "PT0.5S");
        rejectedAtCall(NullPointerException.class, () -> EtcdLockOptions.builder().sessionTtl(null), "sessionTtl");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLockOptions.builder().requestTimeout(Duration.ZERO),
                "requestTimeout must be positive");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdLockOptions.builder().keepAliveInterval(Duration.ofSeconds(-1)),
                "keepAliveInterval must be positive");
        rejectedAtCall(IllegalArgumentException.class, () -> EtcdConnectionOptions.builder().connectTimeout(Duration.ZERO),
                "connectTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> EtcdLocks.connect((Client) null), "client");
        rejectedAtCall(NullPointerException.class, () -> EtcdLocks.connect((Client) null, options()), "client");
        rejectedAtCall(NullPointerException.class, () -> EtcdLocks.connect((EtcdConnectionOptions) null, options()), "connection");
    }
}
