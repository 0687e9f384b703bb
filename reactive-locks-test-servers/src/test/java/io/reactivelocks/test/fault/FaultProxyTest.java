package io.reactivelocks.test.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.test.server.FixtureMode;
import io.reactivelocks.test.server.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FaultProxyTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private EchoServer echo;
    private FaultProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = new EchoServer();
        proxy = FaultProxy.start("127.0.0.1", echo.port());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private Socket connect(Duration readTimeout) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(proxy.host(), proxy.port()), 2000);
        s.setSoTimeout((int) readTimeout.toMillis());
        s.setTcpNoDelay(true);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
    }

    private static String receive(Socket s, int bytes) throws IOException {
        byte[] data = s.getInputStream().readNBytes(bytes);
        if (data.length < bytes) {
            throw new java.io.EOFException("end of stream after " + data.length + " bytes");
        }
        return new String(data, StandardCharsets.UTF_8);
    }

    @Test
    void forwardsBothWaysAndCounts() throws IOException {
        try (Socket s = connect(WAIT)) {
            send(s, "hello");
            assertThat(receive(s, 5)).isEqualTo("hello");
        }
        assertThat(proxy.connectionsAccepted()).isEqualTo(1);
        await().atMost(WAIT).untilAsserted(() -> assertThat(proxy.bytesToTarget()).isEqualTo(5));
        await().atMost(WAIT).untilAsserted(() -> assertThat(proxy.bytesFromTarget()).isEqualTo(5));
        assertThat(proxy.bytesForwarded()).isEqualTo(10);
        await().atMost(WAIT).until(() -> proxy.activeConnections() == 0);
    }

    @Test
    void latencyDelaysEveryChunkAndKeepsOrder() throws IOException {
        Duration base = Duration.ofMillis(150);
        proxy.latency(base, Duration.ofMillis(50));
        try (Socket s = connect(WAIT)) {
            long start = System.nanoTime();
            send(s, "x");
            assertThat(receive(s, 1)).isEqualTo("x");
            Duration roundTrip = Duration.ofNanos(System.nanoTime() - start);
            // one chunk each way: at least 2 x base, and bounded
            assertThat(roundTrip).isGreaterThanOrEqualTo(base.multipliedBy(2)).isLessThan(Duration.ofSeconds(5));

            proxy.latency(Duration.ofMillis(1), Duration.ofMillis(30));
            StringBuilder expected = new StringBuilder();
            for (int i = 0; i < 50; i++) {
                String piece = String.format("%03d,", i);
                expected.append(piece);
                send(s, piece);
            }
            assertThat(receive(s, expected.length())).isEqualTo(expected.toString());

            proxy.latency(Duration.ZERO, Duration.ZERO);
            long quick = System.nanoTime();
            send(s, "y");
            assertThat(receive(s, 1)).isEqualTo("y");
            assertThat(Duration.ofNanos(System.nanoTime() - quick)).isLessThan(Duration.ofSeconds(2));
        }
    }

    @Test
    void blackholeSilencesOldAndNewConnectionsAndHealDeliversWhatWasHeld() throws IOException {
        try (Socket old = connect(WAIT)) {
            send(old, "a");
            assertThat(receive(old, 1)).isEqualTo("a");

            proxy.blackhole();
            assertThat(proxy.isBlackholed()).isTrue();
            // what must not arrive is waited for briefly; what must arrive (above, below) as long as WAIT: a loaded
            // machine may take longer than 300 ms to pass a byte on
            old.setSoTimeout(300);
            send(old, "b");
            assertThatThrownBy(() -> receive(old, 1)).isInstanceOf(SocketTimeoutException.class);

            try (Socket fresh = connect(Duration.ofMillis(300))) {
                send(fresh, "c");
                assertThatThrownBy(() -> receive(fresh, 1)).isInstanceOf(SocketTimeoutException.class);
                assertThat(proxy.connectionsAccepted()).isEqualTo(2);

                proxy.heal();
                old.setSoTimeout((int) WAIT.toMillis());
                fresh.setSoTimeout((int) WAIT.toMillis());
                assertThat(receive(old, 1)).isEqualTo("b");
                assertThat(receive(fresh, 1)).isEqualTo("c");
                send(old, "d");
                assertThat(receive(old, 1)).isEqualTo("d");
            }
        }
    }

    @Test
    void cutResetsCurrentConnectionsButNewOnesWork() throws IOException {
        try (Socket s = connect(WAIT)) {
            send(s, "a");
            assertThat(receive(s, 1)).isEqualTo("a");
            assertThat(proxy.activeConnections()).isEqualTo(1);

            assertThat(proxy.cutConnections()).isEqualTo(1);
            assertThat(proxy.activeConnections()).isZero();
            assertThat(readOutcome(s)).isIn("reset", "eof");
        }
        try (Socket s = connect(WAIT)) {
            send(s, "z");
            assertThat(receive(s, 1)).isEqualTo("z");
        }
    }

    @Test
    void refuseClosesNewConnectionsOnlyUntilHealed() throws IOException {
        try (Socket old = connect(WAIT)) {
            // a round trip first, so the proxy has surely accepted this connection before refusing
            send(old, "a");
            assertThat(receive(old, 1)).isEqualTo("a");
            proxy.refuse();
            assertThat(connectAndReadOutcome()).isIn("reset", "eof");
            send(old, "still");
            assertThat(receive(old, 5)).isEqualTo("still");
            proxy.heal();
            try (Socket s = connect(WAIT)) {
                send(s, "ok");
                assertThat(receive(s, 2)).isEqualTo("ok");
            }
        }
    }

    @Test
    void closeStopsListening() {
        int port = proxy.port();
        proxy.close();
        assertThatThrownBy(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            }
        }).isInstanceOf(ConnectException.class);
    }

    @Test
    void argumentsAreChecked() {
        assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> FaultProxy.start(null, 1)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("targetHost");
    }

    @Test
    void realisticCaseAgainstRedis() throws IOException {
        try (RedisServer redis = RedisServer.builder().mode(FixtureMode.BINARY).start();
             FaultProxy toRedis = FaultProxy.start(redis.host(), redis.port());
             Socket s = new Socket()) {
            s.connect(toRedis.address(), 2000);
            s.setSoTimeout(300);
            assertThat(ping(s)).isEqualTo("+PONG");

            toRedis.blackhole();
            assertThatThrownBy(() -> ping(s)).isInstanceOf(SocketTimeoutException.class);
            toRedis.heal();
            s.setSoTimeout((int) WAIT.toMillis());
            // the PING sent during the blackhole is delivered now, then its answer
            assertThat(readLine(s.getInputStream())).isEqualTo("+PONG");

            toRedis.latency(Duration.ofMillis(100), Duration.ZERO);
            long start = System.nanoTime();
            assertThat(ping(s)).isEqualTo("+PONG");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));

            toRedis.cutConnections();
            assertThat(readOutcome(s)).isIn("reset", "eof");
            assertThat(toRedis.bytesForwarded()).isPositive();
        }
    }

    private static String ping(Socket s) throws IOException {
        s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return readLine(s.getInputStream());
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new java.io.EOFException();
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    /** Connects through the proxy and reads once; the reset may already hit the connect. */
    private String connectAndReadOutcome() throws IOException {
        try (Socket s = connect(WAIT)) {
            return readOutcome(s);
        } catch (SocketException e) {
            return "reset";
        }
    }

    /** Reads once (bounded by the socket timeout) and tells whether the peer reset or ended the connection. */
    private static String readOutcome(Socket s) throws IOException {
        s.setSoTimeout((int) WAIT.toMillis());
        try {
            int b = s.getInputStream().read();
            return b < 0 ? "eof" : "data " + b;
        } catch (SocketException e) {
            return "reset";
        }
    }
}
