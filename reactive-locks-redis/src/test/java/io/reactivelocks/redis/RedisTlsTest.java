package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.ServerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * Locks over TLS: a redis-server child process listening on a TLS port only ({@code --port 0}),
 * with a certificate signed by a CA made for the test with the {@code openssl} CLI. TLS is all
 * Lettuce's ({@link RedisURI#isSsl()}, {@link SslOptions}); the backend only passes it through.
 */
class RedisTlsTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static ServerProcess server;
    private static Path ca;
    private static Path otherCa;

    @BeforeAll
    static void startTlsServer() {
        Path redisServer = redisServerBinary();
        server = ServerProcess.builder("redis-tls")
                .prepare(layout -> makeCertificates(layout.directory()))
                .command(layout -> List.of(redisServer.toString(), "--port", "0",
                        "--tls-port", Integer.toString(layout.port()), "--bind", layout.host(),
                        "--tls-cert-file", layout.path("server.crt").toString(),
                        "--tls-key-file", layout.path("server.key").toString(),
                        "--tls-ca-cert-file", layout.path("ca.crt").toString(),
                        "--tls-auth-clients", "no",
                        "--save", "", "--appendonly", "no", "--dir", layout.directory().toString(),
                        "--daemonize", "no", "--logfile", ""))
                .readiness(layout -> log(layout.logFile()).contains("Ready to accept connections"))
                .startTimeout(Duration.ofSeconds(30))
                .start();
        ca = server.layout().path("ca.crt");
        otherCa = server.layout().path("other-ca.crt");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * The trust manager is built here, once, on the caller's thread: Lettuce's
     * {@code trustManager(File)} would read the PEM file again on every connect, on an event loop
     * (BlockHound catches that).
     */
    private static TrustManagerFactory trusting(Path caPem) {
        try (InputStream in = Files.newInputStream(caPem)) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            return tmf;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static RedisURI uri() {
        return RedisURI.builder().withHost(server.host()).withPort(server.port())
                .withSsl(true).withVerifyPeer(SslVerifyMode.FULL).withTimeout(STEP).build();
    }

    @Test
    void locksWaitersAndObserversWorkOverTls() {
        RedisClient client = RedisClient.create();
        client.setOptions(ClientOptions.builder()
                .sslOptions(SslOptions.builder().jdkSslProvider().trustManager(trusting(ca)).build())
                .build());
        RedisLockOptions redisOptions = RedisLockOptions.builder().keyPrefix("tls:").uri(uri()).build();
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(5)).build();
        LockStore aStore = RedisLocks.connect(client, redisOptions);
        LockClient a = aStore.locks(options);
        LockStore bStore = RedisLocks.connect(client, redisOptions);
        LockClient b = bStore.locks(options);
        String name = "tls-" + UUID.randomUUID();
        List<LockState> states = new CopyOnWriteArrayList<>();
        Disposable watch = b.observe(name).subscribe(states::add);
        try {
            // the observer's first state (it connects lazily, over TLS) before anyone takes the lock
            await().atMost(STEP).until(() -> !states.isEmpty());
            Lease held = a.acquire(name).block(STEP);
            assertThat(held.token()).isPositive();
            // observed over TLS (before the release: an observer reports the latest state, so one that reads
            // the store after the release on a loaded machine would see the next holder instead)
            await().atMost(STEP).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h && h.token() == held.token()));
            StepVerifier.create(b.tryAcquire(name)).expectComplete().verify(STEP);
            // a waiter is woken over the TLS pub/sub connection
            AtomicReference<Lease> next = new AtomicReference<>();
            StepVerifier.create(b.acquire(name))
                    .then(() -> held.release().subscribe())
                    .consumeNextWith(next::set)
                    .expectComplete()
                    .verify(STEP);
            assertThat(next.get().token()).isGreaterThan(held.token());
            next.get().release().block(STEP);
            // observed over TLS too: free, held by a, ..., free
            await().atMost(STEP).until(() -> states.size() >= 3 && !states.get(states.size() - 1).isHeld());
            assertThat(states.get(0).isHeld()).isFalse();
            assertThat(states.get(1)).isEqualTo(new LockState.Held(name, held.owner(), held.token(),
                    ((LockState.Held) states.get(1)).validUntilNanos()));
        } finally {
            watch.dispose();
            aStore.close().block(STEP);
            bStore.close().block(STEP);
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void aServerCertificateThisClientDoesNotTrustIsAPermanentError() {
        RedisClient client = RedisClient.create();
        // trusts another CA (built up front: the JDK's default trust store would be read on the event loop)
        client.setOptions(ClientOptions.builder()
                .sslOptions(SslOptions.builder().jdkSslProvider().trustManager(trusting(otherCa)).build())
                .build());
        LockStore locksStore = RedisLocks.connect(client, RedisLockOptions.builder().uri(uri()).build());
        LockClient locks = locksStore.locks(LockOptions.builder().waitTimeout(Duration.ofSeconds(5)).build());
        try {
            StepVerifier.create(locks.acquire("tls-untrusted"))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(LockBackendException.class);
                        assertThat(((LockBackendException) e).isTransient()).as("untrusted certificate: %s", e).isFalse();
                        boolean certificate = false;
                        for (Throwable c = e; c != null; c = c.getCause()) {
                            certificate |= c instanceof java.security.cert.CertificateException;
                        }
                        assertThat(certificate).as("failed on the certificate: %s", e).isTrue();
                    })
                    .verify(STEP);
        } finally {
            locksStore.close().block(STEP);
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static Path redisServerBinary() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "redis-server");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        Path p = Path.of("/usr/bin/redis-server");
        if (!Files.isExecutable(p)) {
            throw new IllegalStateException("the TLS test needs redis-server (apt-get install redis-server)");
        }
        return p;
    }

    // ---- certificates, with the openssl CLI

    private static void makeCertificates(Path dir) {
        Path san = dir.resolve("san.cnf");
        try {
            Files.writeString(san, "subjectAltName=IP:127.0.0.1,DNS:localhost\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String curve = "ec_paramgen_curve:prime256v1";
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                "-days", "2", "-subj", "/CN=reactive-locks test CA");
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-keyout", "other-ca.key",
                "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=another CA");
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", curve, "-nodes", "-keyout", "server.key", "-out", "server.csr",
                "-subj", "/CN=localhost");
        openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.crt", "-days", "2", "-extfile", "san.cnf");
    }

    private static void openssl(Path dir, String... args) {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the TLS test needs the openssl CLI (apt-get install openssl)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String log(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }
}
