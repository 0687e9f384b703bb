package io.reactivelocks.test.server;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Tiny raw-socket protocol clients for the fixture tests; every read is bounded by a socket timeout. */
final class RawClients {

    static final Duration TIMEOUT = Duration.ofSeconds(5);

    private RawClients() {
    }

    static Socket connect(String host, int port, Duration readTimeout) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(host, port), 2000);
            s.setSoTimeout((int) readTimeout.toMillis());
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    // ------------------------------------------------------------------ Redis (RESP)

    /** Sends commands on one connection and returns the first line of each reply (bulk replies: their payload). */
    static List<String> redis(String host, int port, Duration timeout, String... commands) throws IOException {
        try (Socket s = connect(host, port, timeout)) {
            List<String> replies = new ArrayList<>();
            for (String command : commands) {
                replies.add(redis(s, command));
            }
            return replies;
        }
    }

    /** Sends one command (space-separated words) as a RESP array and reads the reply. */
    static String redis(Socket s, String command) throws IOException {
        String[] words = command.split(" ");
        StringBuilder req = new StringBuilder("*").append(words.length).append("\r\n");
        for (String w : words) {
            req.append('$').append(w.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(w).append("\r\n");
        }
        s.getOutputStream().write(req.toString().getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        String line = readLine(in);
        if (line.startsWith("$") && !line.equals("$-1")) {
            return readLine(in);
        }
        return line;
    }

    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b == -1) {
                throw new java.io.EOFException("connection closed after '" + line + "'");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ PostgreSQL

    /** Sends an SSLRequest and returns the one-byte answer ('N' or 'S'). */
    static char postgresSslRequest(String host, int port, Duration timeout) throws IOException {
        try (Socket s = connect(host, port, timeout)) {
            s.getOutputStream().write(ByteBuffer.allocate(8).putInt(8).putInt(80877103).array());
            s.getOutputStream().flush();
            int answer = s.getInputStream().read();
            if (answer < 0) {
                throw new java.io.EOFException("no answer to SSLRequest");
            }
            return (char) answer;
        }
    }

    /** A PostgreSQL session with trust authentication, able to run simple queries. */
    static final class PgSession implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;
        private final OutputStream out;
        final int authCode;
        final String authPayload;

        PgSession(String host, int port, String user, String database, Duration timeout) throws IOException {
            socket = connect(host, port, timeout);
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
            out.write(Probes.startupMessage(user, database));
            out.flush();
            int type = in.read();
            int length = in.readInt();
            byte[] body = in.readNBytes(length - 4);
            if (type == 'E') {
                throw new IOException("startup failed: " + new String(body, StandardCharsets.UTF_8));
            }
            if (type != 'R') {
                throw new IOException("unexpected startup answer " + (char) type);
            }
            authCode = ByteBuffer.wrap(body).getInt();
            authPayload = new String(body, 4, body.length - 4, StandardCharsets.UTF_8);
            if (authCode == 0) {
                readUntilReady(new ArrayList<>());
            }
        }

        /** Runs a simple query and returns the first column of each row. */
        List<String> query(String sql) throws IOException {
            byte[] q = (sql + "\0").getBytes(StandardCharsets.UTF_8);
            out.write(ByteBuffer.allocate(5 + q.length).put((byte) 'Q').putInt(4 + q.length).put(q).array());
            out.flush();
            List<String> rows = new ArrayList<>();
            readUntilReady(rows);
            return rows;
        }

        private void readUntilReady(List<String> rows) throws IOException {
            while (true) {
                int type = in.read();
                if (type < 0) {
                    throw new java.io.EOFException("connection closed");
                }
                int length = in.readInt();
                byte[] body = in.readNBytes(length - 4);
                if (type == 'E') {
                    throw new IOException("error: " + new String(body, StandardCharsets.UTF_8));
                }
                if (type == 'D') {
                    ByteBuffer b = ByteBuffer.wrap(body);
                    b.getShort();
                    int len = b.getInt();
                    rows.add(len < 0 ? null : new String(body, b.position(), len, StandardCharsets.UTF_8));
                }
                if (type == 'Z') {
                    return;
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    // ------------------------------------------------------------------ HTTP and ZooKeeper

    /** Sends one HTTP/1.1 request with Connection: close and returns the whole response. */
    static String http(String host, int port, String method, String path, String body, Duration timeout) throws IOException {
        try (Socket s = connect(host, port, timeout)) {
            byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            String head = method + " " + path + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nConnection: close\r\n"
                    + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + payload.length + "\r\n")
                    + "\r\n";
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(payload);
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Sends a ZooKeeper four-letter word and returns the whole answer. */
    static String fourLetterWord(String host, int port, String word, Duration timeout) throws IOException {
        try (Socket s = connect(host, port, timeout)) {
            s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
