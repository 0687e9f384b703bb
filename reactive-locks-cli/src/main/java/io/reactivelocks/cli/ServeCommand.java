package io.reactivelocks.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.reactivelocks.LockStore;
import io.reactivelocks.dashboard.LockDashboard;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code serve [--port 8080] [--address 127.0.0.1] [--write-operations]}: the live dashboard of the store
 * ({@link LockDashboard}) on the JDK's HTTP server, until Ctrl-C.
 */
@Command(name = "serve", description = "Serves the live lock dashboard of the store (holders, tokens, countdowns, waiters, recent"
        + " handoffs) at http://ADDRESS:PORT/ until Ctrl-C.", mixinStandardHelpOptions = true)
final class ServeCommand extends StoreCommand {

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080", description = "The port (default ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--address", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "The address to listen on (default ${DEFAULT-VALUE}: this machine only).")
    String address;

    @Option(names = "--prefix", paramLabel = "PREFIX", defaultValue = "", description = "Show only names starting with PREFIX.")
    String prefix;

    @Option(names = "--write-operations", description = "Show revoke and force-release buttons and accept their requests (off by default).")
    boolean writeOperations;

    @Override
    public Integer call() {
        if (port < 0 || port > 65_535) {
            throw CliException.badInput("--port must be between 0 and 65535, was " + port);
        }
        StoreUrls.StoreUrl url = storeUrl();
        OpenStore open = StoreUrls.open(url, DEFAULT_LEASE);
        LockStore store = open.store();
        String page = LockDashboard.page("events", writeOperations ? "release" : null, writeOperations ? "revoke" : null);
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "reactive-locks-cli-http");
            t.setDaemon(true);
            return t;
        });
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(address, port), 16);
        } catch (IOException e) {
            open.close();
            throw CliException.badInput("cannot listen on " + address + ":" + port + " (--address, --port): " + e.getMessage());
        }
        server.setExecutor(threads);
        server.createContext("/", exchange -> {
            if (!exchange.getRequestURI().getPath().equals("/")) {
                send(exchange, 404, "text/plain", "not found");
                return;
            }
            send(exchange, 200, "text/html; charset=utf-8", page);
        });
        server.createContext("/events", exchange -> events(exchange, store));
        server.createContext("/release", exchange -> release(exchange, store));
        server.createContext("/revoke", exchange -> revoke(exchange, store));
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            server.stop(0);
            open.close();
            stopped.countDown();
        }, "reactive-locks-cli-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        server.start();
        System.out.println("reactive-locks: dashboard of " + url.label() + " at http://" + address + ":"
                + server.getAddress().getPort() + "/ (Ctrl-C to stop)");
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return ExitCodes.OK;
    }

    /** Server-sent events, written on this request's own thread until the client goes away. */
    private void events(HttpExchange exchange, LockStore store) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody();
             Stream<String> snapshots = LockDashboard.snapshots(store.admin(), store.name(), prefix).toStream(1)) {
            Iterator<String> it = snapshots.iterator();
            while (it.hasNext()) {
                out.write(("data: " + it.next() + "\n\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException e) {
            // the page went away: closing the stream cancels the polling
        } finally {
            exchange.close();
        }
    }

    private static String parameter(HttpExchange exchange, String key) {
        String query = exchange.getRequestURI().getRawQuery();
        if (query != null) {
            for (String part : query.split("&")) {
                if (part.startsWith(key + "=")) {
                    return URLDecoder.decode(part.substring(key.length() + 1), StandardCharsets.UTF_8);
                }
            }
        }
        return "";
    }

    private void revoke(HttpExchange exchange, LockStore store) throws IOException {
        if (!writeOperations || !exchange.getRequestMethod().equals("POST")) {
            send(exchange, 403, "text/plain", "revocation is off: serve --write-operations allows it");
            return;
        }
        try {
            String json = LockDashboard.revoke(store.admin(), parameter(exchange, "name"), parameter(exchange, "reason"))
                    .block(Duration.ofSeconds(60));
            send(exchange, 200, "application/json", json);
        } catch (IllegalArgumentException e) {
            send(exchange, 400, "text/plain", String.valueOf(e.getMessage()));
        } catch (RuntimeException e) {
            send(exchange, 503, "text/plain", Main.firstLine(String.valueOf(e.getMessage())));
        }
    }

    private void release(HttpExchange exchange, LockStore store) throws IOException {
        if (!writeOperations || !exchange.getRequestMethod().equals("POST")) {
            send(exchange, 403, "text/plain", "force-release is off: serve --write-operations allows it");
            return;
        }
        String name = parameter(exchange, "name");
        try {
            String json = LockDashboard.forceRelease(store.admin(), name).block(Duration.ofSeconds(60));
            send(exchange, 200, "application/json", json);
        } catch (IllegalArgumentException e) {
            send(exchange, 400, "text/plain", String.valueOf(e.getMessage()));
        } catch (RuntimeException e) {
            send(exchange, 503, "text/plain", Main.firstLine(String.valueOf(e.getMessage())));
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
