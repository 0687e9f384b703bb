package io.reactivelocks.test.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/** Loopback address and free ports. */
final class Loopback {

    static final String HOST = "127.0.0.1";

    private Loopback() {
    }

    /** Returns {@code count} distinct ports that were free on 127.0.0.1 a moment ago. */
    static List<Integer> freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket();
                s.setReuseAddress(false);
                s.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
                sockets.add(s);
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
