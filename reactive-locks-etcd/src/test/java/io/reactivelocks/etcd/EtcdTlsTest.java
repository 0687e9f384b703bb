package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * etcd serving clients over TLS and requiring a client certificate (certificates made with
 * {@code openssl} for the test): the trust and client-certificate settings of
 * {@link EtcdConnectionOptions} reach jetcd; without a client certificate the server refuses.
 */
class EtcdTlsTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(2)).build();

    private static ServerProcess server;
    private static Path certs;

    @BeforeAll
    static void startTlsServer() {
        server = ServerProcess.builder("etcd-tls")
                .extraPorts(1)
                .prepare(layout -> makeCertificates(layout.path("certs")))
                .command(layout -> {
                    String client = "https://" + layout.host() + ":" + layout.port();
                    String peer = "http://" + layout.host() + ":" + layout.extraPort(0);
                    Path c = layout.path("certs");
                    return List.of("/usr/bin/etcd", "--name", "default",
                            "--data-dir", layout.path("data").toString(),
                            "--listen-client-urls", client, "--advertise-client-urls", client,
                            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                            "--initial-cluster", "default=" + peer, "--initial-cluster-state", "new",
                            "--cert-file", c.resolve("server.pem").toString(),
                            "--key-file", c.resolve("server-key.pem").toString(),
                            "--trusted-ca-file", c.resolve("ca.pem").toString(),
                            "--client-cert-auth",
                            "--logger", "zap", "--log-outputs", "stderr");
                })
                .start();
        certs = server.layout().path("certs");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static EtcdConnectionOptions.Builder connection() {
        return EtcdConnectionOptions.builder()
                .endpoints("https://" + server.host() + ":" + server.port())
                .trustCertificates(certs.resolve("ca.pem"));
    }

    @Test
    void mutualTlsTakesLocks() {
        EtcdConnectionOptions tls = connection()
                .clientCertificate(certs.resolve("client.pem"), certs.resolve("client-key.pem")).build();
        assertThat(tls.isTls()).isTrue();
        LockStore session = EtcdLocks.connect(tls, EtcdLockOptions.builder().prefix("rltls").build());
        LockClient locks = session.locks(OPTIONS);
        try {
            // the single member may still be electing itself: acquire waits through that
            Lease lease = locks.acquire("over-tls").block(Duration.ofSeconds(30));
            assertThat(lease).isNotNull();
            assertThat(lease.token()).isPositive();
            lease.release().block(STEP);
        } finally {
            session.close().block(STEP);
        }
    }

    @Test
    void withoutAClientCertificateTheServerRefuses() {
        LockStore session = EtcdLocks.connect(connection().build(), EtcdLockOptions.builder().prefix("rltls").build());
        LockClient locks = session.locks(OPTIONS);
        try {
            StepVerifier.create(locks.tryAcquire("refused"))
                    .expectError(LockBackendException.class)
                    .verify(STEP);
        } finally {
            session.close().onErrorResume(e -> Mono.empty()).block(STEP);
        }
    }

    // ---- certificates: a CA, a server certificate for 127.0.0.1, a client certificate (EC P-256, PKCS#8 keys)

    private static void makeCertificates(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("server.ext"),
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n", StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("client.ext"), "extendedKeyUsage=clientAuth\n", StandardCharsets.UTF_8);
            openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=reactive-locks test CA");
            for (String who : List.of("server", "client")) {
                openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", who + "-key.pem");
                openssl(dir, "req", "-new", "-key", who + "-key.pem", "-out", who + ".csr", "-subj", "/CN=" + who);
                openssl(dir, "x509", "-req", "-in", who + ".csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                        "-CAcreateserial", "-out", who + ".pem", "-days", "2", "-extfile", who + ".ext");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void openssl(Path dir, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
