package io.reactivelocks.test.server;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** Readiness probes: small real protocol exchanges over a raw socket, each bounded by socket timeouts. */
final class Probes {

    private static final int CONNECT_TIMEOUT_MILLIS = 500;
    private static final int READ_TIMEOUT_MILLIS = 2000;

    private Probes() {
    }

    /** Sends a RESP {@code PING} and returns the first reply line (for example {@code +PONG} or {@code -NOAUTH ...}). */
    static String redisPing(String host, int port) {
        try (Socket s = connect(host, port)) {
            s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return readLine(s.getInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when Redis answers PING with PONG or asks for authentication (it is up either way). */
    static boolean redisReady(String host, int port) {
        String reply = redisPing(host, port);
        return reply.startsWith("+PONG") || reply.startsWith("-NOAUTH") || reply.startsWith("-WRONGPASS");
    }

    /**
     * Sends a PostgreSQL StartupMessage and reads the first answer: an authentication request
     * ('R') means the server accepts sessions; an error with SQLSTATE 57P03 (starting up) means not yet;
     * any other error (unknown role or database) also proves the server is up.
     */
    static boolean postgresReady(String host, int port, String user, String database) {
        try (Socket s = connect(host, port)) {
            OutputStream out = s.getOutputStream();
            out.write(startupMessage(user, database));
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int type = in.read();
            if (type == 'R') {
                out.write(new byte[] {'X', 0, 0, 0, 4});
                out.flush();
                return true;
            }
            if (type == 'E') {
                int length = in.readInt();
                byte[] body = in.readNBytes(Math.max(0, length - 4));
                return !new String(body, StandardCharsets.UTF_8).contains("C57P03");
            }
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads the first packet a MariaDB (or MySQL) server sends on connect: a handshake (protocol
     * version 10) means it accepts sessions, and so does error 1130 (no user may log in from this host
     * yet: a fresh data dir knows only users of {@code localhost}); any other error packet (too many
     * connections) means not yet.
     */
    static boolean mariaDbReady(String host, int port) {
        try (Socket s = connect(host, port)) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] header = in.readNBytes(4);
            if (header.length < 4) {
                return false;
            }
            int first = in.read();
            if (first == 0xff) {
                int code = in.read() | (in.read() << 8);
                return code == 1130;
            }
            return first == 10;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A protocol 3.0 StartupMessage for the given user and database. */
    static byte[] startupMessage(String user, String database) {
        ByteArrayOutputStream params = new ByteArrayOutputStream();
        for (String p : new String[] {"user", user, "database", database}) {
            params.writeBytes(p.getBytes(StandardCharsets.UTF_8));
            params.write(0);
        }
        params.write(0);
        byte[] body = params.toByteArray();
        return ByteBuffer.allocate(8 + body.length).putInt(8 + body.length).putInt(196608).put(body).array();
    }

    /** Sends an HTTP/1.1 GET with {@code Connection: close} and returns the whole response (status line, headers, body). */
    static String httpGet(String host, int port, String path) {
        try (Socket s = connect(host, port)) {
            String request = "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                    + "\r\nConnection: close\r\nAccept: */*\r\n\r\n";
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when etcd's {@code GET /health} says {@code "health":"true"} (it has a leader). */
    static boolean etcdHealthy(String host, int port) {
        return httpGet(host, port, "/health").replace(" ", "").contains("\"health\":\"true\"");
    }

    /** Sends a ZooKeeper four-letter word (for example {@code srvr}) and returns the whole answer. */
    static String zooKeeperFourLetterWord(String host, int port, String word) {
        try (Socket s = connect(host, port)) {
            s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when ZooKeeper's {@code srvr} answer shows it serves requests. */
    static boolean zooKeeperServing(String host, int port) {
        return zooKeeperFourLetterWord(host, port, "srvr").contains("Mode:");
    }

    /** Percent-encodes a URL component (user info or path segment). */
    static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static Socket connect(String host, int port) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MILLIS);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != -1 && b != '\n') {
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }
}
