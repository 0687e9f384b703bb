package io.reactivelocks.safety.badinput;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny TCP server on a free loopback port that is not the server a client expects: it accepts
 * every connection, and each time it receives bytes it answers with the same garbage (an HTTP
 * error page, say), keeping the connection open until the client closes it. Runs on its own
 * daemon threads with blocking sockets, never on Reactor threads.
 */
final class GarbageServer implements AutoCloseable {

    /** What a web server answers to a stranger: not RESP, not the PostgreSQL protocol, not HTTP/2, not jute. */
    static final byte[] HTTP_ERROR = ("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
            + "Connection: keep-alive\r\n\r\nBad Request").getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final byte[] reply;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private volatile boolean closed;

    private GarbageServer(byte[] reply) throws IOException {
        this.reply = reply.clone();
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        Thread acceptor = new Thread(this::acceptLoop, "garbage-server-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return a server answering {@link #HTTP_ERROR} to everything */
    static GarbageServer start() {
        return start(HTTP_ERROR);
    }

    /**
     * @param reply what to answer to every chunk received
     * @return the running server
     */
    static GarbageServer start(byte[] reply) {
        try {
            return new GarbageServer(reply);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String host() {
        return server.getInetAddress().getHostAddress();
    }

    int port() {
        return server.getLocalPort();
    }

    /** @return how many connections were accepted so far (proves the client did reach it) */
    long connectionsAccepted() {
        return accepted.get();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                accepted.incrementAndGet();
                sockets.add(s);
                Thread t = new Thread(() -> answer(s), "garbage-server-conn-" + s.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private void answer(Socket s) {
        byte[] buf = new byte[8192];
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            // ZooKeeper and TLS clients speak first, as do Redis, PostgreSQL and gRPC: answer each chunk
            while (!closed && in.read(buf) >= 0) {
                out.write(reply);
                out.flush();
            }
        } catch (IOException e) {
            // the client went away
        } finally {
            sockets.remove(s);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // ignore
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException e) {
                // ignore
            }
        }
    }
}
