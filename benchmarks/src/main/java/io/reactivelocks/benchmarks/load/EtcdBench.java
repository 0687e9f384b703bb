package io.reactivelocks.benchmarks.load;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.server.EtcdServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * etcd: the raw jetcd floor (our acquire transaction + a delete, on one lease), reactive-locks
 * (session lease, revision-ordered queue), and etcd's own Lock RPC through jetcd.
 */
final class EtcdBench extends BackendBench {

    private static final GetOption LOWEST = GetOption.builder().isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();

    private EtcdServer server;
    private Client probe;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    EtcdBench() {
        super("etcd", "etcd");
    }

    @Override
    void start() {
        server = EtcdServer.start();
        probe = client(server.url());
    }

    static Client client(String url) {
        return Client.builder().endpoints(url).build();
    }

    String url() {
        return server.url();
    }

    /** B8: ours only (no anchor on etcd): the semaphore. */
    @Override
    List<Primitives.Group> primitives() {
        Client client = client(url());
        LockStore store = EtcdLocks.connect(client);
        return List.of(new Primitives.Group("sem", "semaphore (c workers on one name, N = max(1, c/2))", true, true, true,
                List.of(OursPrimitive.semaphore("etcd", store.semaphores(LockOptions.defaults()), OursPrimitive.closing(store, client::close)))));
    }

    @Override
    List<Contender> contenders() {
        return List.of(new Raw(url()), ours(url()), new LockRpc(url()), new SimpleLocks.Etcd(url()), new RawHandoffs.Etcd(url()));
    }

    @Override
    Counts counts() {
        long sum = 0;
        for (String line : metrics().split("\n")) {
            if (line.startsWith("grpc_server_msg_received_total{")) {
                sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
            }
        }
        return new Counts(sum, -1);
    }

    private String metrics() {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(url() + "/metrics")).timeout(Duration.ofSeconds(10)).build();
            return http.send(req, HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    String counterDescription() {
        return "etcd `/metrics` delta of `grpc_server_msg_received_total` summed over all methods: every gRPC "
                + "request message, unary or on a stream (Txn, DeleteRange, LeaseKeepAlive, Watch create/cancel, Lock, ...)";
    }

    @Override
    Histogram roundTrip(int samples) {
        Histogram h = new Histogram(3);
        KV kv = probe.getKVClient();
        ByteSequence key = ByteSequence.from("bench-probe", StandardCharsets.UTF_8);
        Flux.range(0, samples).concatMap(i -> {
            long t0 = System.nanoTime();
            return Mono.fromFuture(() -> kv.get(key)).doOnNext(x -> h.recordValue(System.nanoTime() - t0));
        }).blockLast(Duration.ofMinutes(1));
        return h;
    }

    @Override
    String roundTripDescription() {
        return "a serializable-by-default (linearizable) Range of one key through jetcd";
    }

    @Override
    Map<String, String> serverInfo() {
        Map<String, String> m = info();
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(url() + "/version")).timeout(Duration.ofSeconds(10)).build();
            m.put("version", http.send(req, HttpResponse.BodyHandlers.ofString()).body());
        } catch (IOException e) {
            m.put("version", "?");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        m.put("durability", "etcd defaults: the WAL is fsynced on every commit (no --unsafe-no-fsync), single member");
        m.put("command line", commandLine(server.pid()));
        return m;
    }

    @Override
    long serverPid() {
        return server.pid();
    }

    @Override
    public void close() {
        if (probe != null) {
            probe.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ contenders

    /**
     * The floor: our acquire transaction (put-if-absent with a lease + read of the lowest key) and our
     * release (one plain delete), on a key reused per worker as ours reuses one per
     * owner slot ({@code <lease hex>-<worker>}): a new key per acquire would leave a deleted key in
     * etcd's index each time, which every later read of the range visits.
     */
    static final class Raw extends Contender {
        private final Client client;
        private final KV kv;
        private volatile long lease;

        Raw(String url) {
            super("etcd", "raw", "raw jetcd txn + delete (floor)", Role.FLOOR);
            client = client(url);
            kv = client.getKVClient();
        }

        @Override
        void prepare(int concurrency) {
            lease = client.getLeaseClient().grant(600).join().getID();
        }

        @Override
        void finish() {
            client.getLeaseClient().revoke(lease).join();
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String range = "bench-raw/" + Base64.getUrlEncoder().withoutPadding()
                        .encodeToString(name.getBytes(StandardCharsets.UTF_8)) + "/";
                ByteSequence key = bytes(range + Long.toHexString(lease) + "-" + worker);
                ByteSequence prefix = bytes(range);
                return Mono.fromFuture(() -> kv.txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(key, bytes(owner), PutOption.builder().withLeaseId(lease).build()), Op.get(prefix, LOWEST))
                                .Else(Op.get(key, GetOption.DEFAULT), Op.get(prefix, LOWEST))
                                .commit())
                        .flatMap(r -> {
                            List<KeyValue> lowest = r.getGetResponses().get(r.isSucceeded() ? 0 : 1).getKvs();
                            if (lowest.isEmpty() || !lowest.get(0).getKey().equals(key)) {
                                return Mono.error(new IllegalStateException("busy"));
                            }
                            // ours' release: one plain delete of the owner's key (since stop 51; a guarded txn before)
                            return Mono.fromFuture(() -> kv.delete(key));
                        })
                        .then();
            });
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** reactive-locks on etcd, defaults, its own jetcd client. */
    static Contender ours(String url) {
        Client client = client(url);
        LockStore store = EtcdLocks.connect(client, EtcdLockOptions.defaults());
        return new Ours("etcd", store.locks(LockOptions.defaults()), OursPrimitive.closing(store, client::close));
    }

    /**
     * etcd's Lock RPC (v3lock) through jetcd: one call that waits on the server, then Unlock.
     * It keys the lock by lease, so each concurrent holder or waiter needs a lease of its own:
     * one lease per run for B1 (distinct names), one per waiter for B3.
     */
    static final class LockRpc extends Contender {
        private final Client client;
        private final ConcurrentLinkedQueue<Long> leases = new ConcurrentLinkedQueue<>();
        private volatile long lease;

        LockRpc(String url) {
            super("etcd", "lock-rpc", "jetcd Lock RPC", Role.COMPETITOR);
            client = client(url);
        }

        @Override
        void prepare(int concurrency) {
            lease = client.getLeaseClient().grant(600).join().getID();
            leases.add(lease);
        }

        @Override
        void finish() {
            Long id;
            while ((id = leases.poll()) != null) {
                client.getLeaseClient().revoke(id).join();
            }
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.fromFuture(() -> client.getLockClient().lock(bytes("bench-lock/" + name), lease))
                    .flatMap(r -> Mono.fromFuture(() -> client.getLockClient().unlock(r.getKey())))
                    .then();
        }

        @Override
        boolean supportsWaiting() {
            return true;
        }

        @Override
        Mono<Held> acquireWaiting(String name, int worker) {
            return Mono.fromFuture(() -> client.getLeaseClient().grant(600))
                    .flatMap(g -> {
                        leases.add(g.getID());
                        return Mono.fromFuture(() -> client.getLockClient().lock(bytes("bench-lock/" + name), g.getID()));
                    })
                    .map(r -> () -> Mono.fromFuture(() -> client.getLockClient().unlock(r.getKey())).then());
        }

        @Override
        public void close() {
            finish();
            client.close();
        }
    }
}
