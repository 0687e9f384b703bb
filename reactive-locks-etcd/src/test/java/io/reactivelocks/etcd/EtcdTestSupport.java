package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.EtcdServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A real etcd child process (from {@link EtcdServer}) plus jetcd clients for it, directly or
 * through a {@link FaultProxy} each. Every backend gets its own jetcd client (its own
 * connection), as separate processes would. Blocking methods are for test threads only.
 */
final class EtcdTestSupport implements AutoCloseable {

    /** Session TTL of test backends: etcd's minimum with the default election timeout. */
    static final Duration TTL = Duration.ofSeconds(2);

    final EtcdServer server;
    /** A prefix unique to this fixture, so runs and test classes never see each other's keys. */
    final String prefix;
    private final Client checker;
    private final List<FaultProxy> proxies = new ArrayList<>();
    private final Map<EtcdLockBackend, FaultProxy> proxyOf = new ConcurrentHashMap<>();
    private final Map<EtcdLockBackend, EtcdCalls> callsOf = new ConcurrentHashMap<>();

    private EtcdTestSupport(EtcdServer server) {
        this.server = server;
        this.prefix = "rltest-" + UUID.randomUUID().toString().substring(0, 8);
        this.checker = client(server.host(), server.port());
    }

    static EtcdTestSupport start() {
        return new EtcdTestSupport(EtcdServer.start());
    }

    /** @return options with this fixture's prefix, a 2 s session and short session requests */
    EtcdLockOptions options() {
        return EtcdLockOptions.builder().prefix(prefix).sessionTtl(TTL).requestTimeout(Duration.ofSeconds(1)).build();
    }

    static Client client(String host, int port) {
        return builder(host, port).build();
    }

    private static ClientBuilder builder(String host, int port) {
        return Client.builder().endpoints("http://" + host + ":" + port)
                .connectTimeout(Duration.ofSeconds(2))
                .retryMaxAttempts(1)
                .retryDelay(100);
    }

    /** @return a backend owning a new jetcd client to {@code host:port} whose calls {@link #callsOf} records */
    private EtcdLockBackend observed(String host, int port, EtcdLockOptions options) {
        EtcdCalls calls = new EtcdCalls();
        EtcdLockBackend b = EtcdLockBackend.owning(builder(host, port).interceptor(calls).build(), options);
        callsOf.put(b, calls);
        return b;
    }

    /**
     * @param backend a backend from {@link #backend()} or {@link #proxiedBackend()}
     * @return what its jetcd client exchanged with etcd: session leases granted and revoked, predecessor wake-ups
     */
    EtcdCalls callsOf(EtcdLockBackend backend) {
        EtcdCalls c = callsOf.get(backend);
        if (c == null) {
            throw new IllegalArgumentException("not a backend of this fixture: " + backend);
        }
        return c;
    }

    /** @return a new backend with its own jetcd client, straight to the server */
    EtcdLockBackend backend() {
        return backend(options());
    }

    /**
     * @param options the backend's options
     * @return a new backend with its own jetcd client, straight to the server
     */
    EtcdLockBackend backend(EtcdLockOptions options) {
        return observed(server.host(), server.port(), options);
    }

    /** @return a new backend whose own jetcd client talks to the server through a new fault proxy ({@link #proxyOf}) */
    EtcdLockBackend proxiedBackend() {
        return proxiedBackend(options());
    }

    /**
     * @param options the backend's options
     * @return a new backend whose own jetcd client talks to the server through a new fault proxy
     */
    EtcdLockBackend proxiedBackend(EtcdLockOptions options) {
        FaultProxy proxy = FaultProxy.start(server.host(), server.port());
        synchronized (proxies) {
            proxies.add(proxy);
        }
        EtcdLockBackend b = observed(proxy.host(), proxy.port(), options);
        proxyOf.put(b, proxy);
        return b;
    }

    /**
     * @param backend a backend from {@link #proxiedBackend()}
     * @return its proxy
     */
    FaultProxy proxyOf(EtcdLockBackend backend) {
        FaultProxy p = proxyOf.get(backend);
        if (p == null) {
            throw new IllegalArgumentException("not a proxied backend: " + backend);
        }
        return p;
    }

    /**
     * Partitions {@code backend} from etcd (its proxy blackholes both directions) until its session
     * is lost on the client side (it then revokes the session lease, best effort: its client sends the
     * revoke, {@link EtcdCalls#liveLeaseRevoked()}), then cuts its connections (what was held is dropped, as after a
     * long partition) and heals, on a helper thread, so that the rest of the test can use the
     * backend again. The server-side lease is not renewed meanwhile: it runs out by its TTL, or is
     * revoked when the backend's best-effort revoke gets through after the heal.
     *
     * @param backend a backend from {@link #proxiedBackend()}
     */
    void partitionUntilSessionLost(EtcdLockBackend backend) {
        FaultProxy proxy = proxyOf(backend);
        Mono<Void> end = callsOf(backend).liveLeaseRevoked();
        proxy.blackhole();
        end.timeout(Duration.ofSeconds(30))
                .publishOn(Schedulers.boundedElastic()) // the proxy's socket work may block
                .doFinally(s -> {
                    proxy.cutConnections();
                    proxy.heal();
                })
                .subscribe(null, e -> { });
    }

    /** Closes the fault proxies made so far (after their backends were closed). */
    void closeProxies() {
        List<FaultProxy> done;
        synchronized (proxies) {
            done = new ArrayList<>(proxies);
            proxies.clear();
        }
        proxyOf.values().removeAll(done);
        done.forEach(FaultProxy::close);
    }

    /** @return every key under this fixture's prefix */
    List<String> keys() {
        return keys(prefix + "/");
    }

    /**
     * @param under a key prefix
     * @return the keys under it
     */
    List<String> keys(String under) {
        try {
            List<String> out = new ArrayList<>();
            for (KeyValue kv : checker.getKVClient().get(ByteSequence.from(under, StandardCharsets.UTF_8),
                    GetOption.builder().isPrefix(true).withKeysOnly(true).build()).get(10, TimeUnit.SECONDS).getKvs()) {
                out.add(kv.getKey().toString(StandardCharsets.UTF_8));
            }
            return out;
        } catch (Exception e) {
            throw new IllegalStateException("could not list keys under " + under, e);
        }
    }

    /**
     * @return the requests etcd received so far: {@code grpc_server_msg_received_total} of its
     *         {@code /metrics} summed over every method (each unary request and each message on a
     *         stream, as benchmarks B1/B3 count them); reading it sends no gRPC request
     */
    long requestsReceived() {
        return requestsByMethod().values().stream().mapToLong(Long::longValue).sum();
    }

    /** @return the gRPC messages etcd has received so far by method ({@code grpc_server_msg_received_total}) */
    java.util.Map<String, Long> requestsByMethod() {
        java.util.Map<String, Long> byMethod = new java.util.TreeMap<>();
        java.util.regex.Pattern method = java.util.regex.Pattern.compile("grpc_method=\"([^\"]*)\"");
        for (String line : metrics()) {
            if (line.startsWith("grpc_server_msg_received_total{")) {
                java.util.regex.Matcher m = method.matcher(line);
                byMethod.merge(m.find() ? m.group(1) : "?", value(line), Long::sum);
            }
        }
        return byMethod;
    }

    /**
     * @return the reads, writes and deletes etcd's key-value store has run so far ({@code etcd_mvcc_range_total},
     *         {@code _put_total}, {@code _delete_total}): the operations inside every request — a transaction's
     *         compares read too — whoever sent them
     */
    long mvccOperations() {
        long n = 0;
        for (String line : metrics()) {
            if (line.startsWith("etcd_mvcc_range_total ") || line.startsWith("etcd_mvcc_put_total ")
                    || line.startsWith("etcd_mvcc_delete_total ")) {
                n += value(line);
            }
        }
        return n;
    }

    /** @return the lines of etcd's {@code /metrics} now (reading them sends no gRPC request) */
    private String[] metrics() {
        try {
            return java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(server.url() + "/metrics"))
                            .timeout(Duration.ofSeconds(10)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body().split("\n");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** @return a counter line's value (the text after its last space) */
    private static long value(String line) {
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
    }

    /** @return a jetcd client for checks, owned by the fixture */
    Client checker() {
        return checker;
    }

    @Override
    public void close() {
        try {
            closeProxies();
            checker.close();
        } finally {
            server.close();
        }
    }
}
