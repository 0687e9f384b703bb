package io.reactivelocks.test.server;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal blocking RESP2 client for the Redis topology fixtures: one command per connection,
 * bounded by socket timeouts. Replies become {@code String} (simple and bulk strings), {@code Long},
 * {@code List<Object>} or {@code null}; an error reply throws {@link Error}.
 */
final class Resp {

    private static final int CONNECT_TIMEOUT_MILLIS = 1000;
    private static final int READ_TIMEOUT_MILLIS = 5000;

    /** An error reply of the server ({@code -ERR ...}). */
    static final class Error extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Error(String message) {
            super(message);
        }
    }

    private Resp() {
    }

    /**
     * Sends one command and reads its reply.
     *
     * @throws UncheckedIOException when the server cannot be reached or does not answer in time
     * @throws Error on an error reply
     */
    static Object call(String host, int port, String... args) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MILLIS);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            req.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String a : args) {
                byte[] b = a.getBytes(StandardCharsets.UTF_8);
                req.writeBytes(("$" + b.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
                req.writeBytes(b);
                req.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write(req.toByteArray());
            out.flush();
            return read(new BufferedInputStream(s.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException(host + ":" + port + " " + String.join(" ", args) + ": " + e, e);
        }
    }

    /** Like {@link #call}, but returns {@code null} instead of throwing when the server is unreachable or errs. */
    static Object tryCall(String host, int port, String... args) {
        try {
            return call(host, port, args);
        } catch (UncheckedIOException | Error e) {
            return null;
        }
    }

    /** @return the value of {@code field} in an {@code INFO}-style text ({@code field:value} lines), or "" */
    static String infoField(Object info, String field) {
        if (!(info instanceof String text)) {
            return "";
        }
        for (String line : text.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        return "";
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new IOException("connection closed before a reply");
        }
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new Error(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(n);
                in.readNBytes(2);
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    try {
                        items.add(read(in));
                    } catch (Error e) {
                        items.add(e);
                    }
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type '" + (char) type + "'");
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.UTF_8);
    }
}
