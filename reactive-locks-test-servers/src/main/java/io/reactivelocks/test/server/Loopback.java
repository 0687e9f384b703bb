package io.reactivelocks.test.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** Loopback address and free ports. */
final class Loopback {

    static final String HOST = "127.0.0.1";

    private Loopback() {
    }

    /** Where servers' ports are drawn from when the kernel's ephemeral range cannot be read (Linux's default is above). */
    private static final int LOWEST = 10_000;
    private static final int DEFAULT_EPHEMERAL_LOW = 32_768;

    /**
     * Returns {@code count} distinct ports that were free on 127.0.0.1 a moment ago, drawn at random from
     * <em>below</em> the kernel's ephemeral port range: a server that is stopped and started again on its port (the
     * fault tests) must find it free, and a port of the ephemeral range may meanwhile have become the local end of
     * any outgoing connection on the machine (an etcd restart failed that way: "bind: address already in use").
     */
    static List<Integer> freePorts(int count) {
        int high = ephemeralLow();
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int tries = 0; sockets.size() < count; tries++) {
                if (tries > 1_000) {
                    throw new IOException("no free port in " + LOWEST + ".." + (high - 1) + " after 1000 tries");
                }
                int port = LOWEST + ThreadLocalRandom.current().nextInt(high - LOWEST);
                ServerSocket s = new ServerSocket();
                try {
                    s.setReuseAddress(false);
                    s.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
                    sockets.add(s);
                } catch (IOException taken) {
                    s.close();
                }
            }
            List<Integer> ports = new ArrayList<>();
            sockets.forEach(s -> ports.add(s.getLocalPort()));
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // nothing to do
                }
            }
        }
    }

    /** @return the lowest port of the kernel's ephemeral range (Linux), else the usual default */
    private static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            int low = Integer.parseInt(range.split("\\s+")[0]);
            return low > LOWEST + 1_000 ? low : DEFAULT_EPHEMERAL_LOW;
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }

    /** Tells whether something accepts TCP connections on host:port within the timeout. */
    static boolean accepts(String host, int port, int timeoutMillis) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), timeoutMillis);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
