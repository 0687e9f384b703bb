package io.reactivelocks.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanStream;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.StaticCredentialsProvider;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisScriptingReactiveCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.reactive.RedisClusterReactiveCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.reactivelocks.Concept;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Fuseable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link LockBackend} on one Redis server, the master a Sentinel URI names, or a Redis Cluster
 * ({@link #create(RedisClusterClient, RedisLockOptions)}), over Lettuce's reactive API. Each
 * operation is one Lua script (see the {@code *.lua} resources of this package and
 * {@link RedisKeys} for the key layout), run with {@code EVALSHA} and a {@code NOSCRIPT}
 * fallback to {@code EVAL}:
 * <ul>
 *   <li><b>grant</b>: set-if-absent with the lease as {@code PX}, the fencing token
 *       {@code max(counter + 1, server TIME in µs)} from a per-name counter in the same script,
 *       a {@code PUBLISH} of the grant; the same owner asking again gets the same token;</li>
 *   <li><b>renew</b>: owner- and token-checked {@code PEXPIRE} of many leases per call: a batch
 *       in calls of at most {@value #MAX_RENEWALS_PER_CALL} leases (one lease time each, and one
 *       Redis Cluster slot each with {@link RedisLockOptions#clusterSafeBatches()} or on a
 *       cluster), written together in one flush;</li>
 *   <li><b>release</b>: owner-checked delete and a {@code PUBLISH};</li>
 *   <li><b>events</b>: one {@code SUBSCRIBE} per name on one pub/sub connection, shared and
 *       ref-counted. Expiry is not published (keyspace notifications are not required): the
 *       engine's timer at the holder's TTL covers it.</li>
 * </ul>
 *
 * <p><b>Connections and ownership.</b> Built from a {@link RedisClient}, the backend opens two
 * connections on first use (commands, pub/sub) and {@link #close()} closes them; it never shuts
 * the client down — that stays the application's. Built from connections the application passed
 * in, {@link #close()} leaves them open (it only removes its listener and unsubscribes).
 * Connections use UTF-8 strings; Lettuce reconnects them by itself. A grant or release asked on the
 * thread that delivers the pub/sub connection's messages (a waiter woken by a release, a holder
 * granted there) is sent on that connection when it is the backend's own and speaks RESP3 (not on a
 * cluster): one event loop then carries the whole handoff, with no hand-over to the command
 * connection's thread and back.
 *
 * <p>Nothing is sent before subscribe; nothing blocks. Failures are
 * {@link io.reactivelocks.LockBackendException}s: transient for timeouts and connection
 * failures, permanent for authentication, permission, wrong-type and script errors.
 */
public final class RedisLockBackend implements LockBackend {

    private final RedisLockOptions options;
    private final RedisKeys keys;
    private final String fenceTtlMs;
    private final byte[] prefixBytes;
    private final LazyConnection<StatefulConnection<String, String>> commands;
    private final PubSubChannels channels;
    private final boolean cluster;
    private final Mono<Void> close;

    private RedisLockBackend(RedisLockOptions options,
                             Supplier<? extends Mono<? extends StatefulConnection<String, String>>> commandConnector,
                             Supplier<? extends Mono<? extends StatefulRedisPubSubConnection<String, String>>> pubSubConnector,
                             boolean owned, boolean cluster) {
        this.options = Objects.requireNonNull(options, "options");
        LuaScript.loadAll();
        this.keys = new RedisKeys(options.keyPrefix());
        this.fenceTtlMs = Long.toString(options.fenceTtl().toMillis());
        this.prefixBytes = options.keyPrefix().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.cluster = cluster;
        this.commands = new LazyConnection<>("command connection",
                () -> commandConnector.get().map(c -> (StatefulConnection<String, String>) c), owned, c -> { });
        this.channels = new PubSubChannels(() -> pubSubConnector.get().map(c -> (StatefulRedisPubSubConnection<String, String>) c), owned);
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * Creates a backend over {@code client} with {@link RedisLockOptions#defaults()}.
     *
     * @param client the application's client; the backend opens its own connections from it
     * @return the backend; nothing is connected before the first operation is subscribed
     */
    public static RedisLockBackend create(RedisClient client) {
        return create(client, RedisLockOptions.defaults());
    }

    /**
     * Creates a backend over {@code client}. It connects lazily, on the first subscribed
     * operation: asynchronously to {@link RedisLockOptions#uri()} when set, else to the client's
     * own URI through Lettuce's blocking {@code connect()}, run on Reactor's bounded-elastic
     * scheduler (never on the caller's thread).
     *
     * @param client  the application's client (not closed by {@link #close()})
     * @param options the Redis settings
     * @return the backend
     */
    public static RedisLockBackend create(RedisClient client, RedisLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        RedisURI uri = immediateCredentials(options.uri());
        Supplier<Mono<StatefulRedisConnection<String, String>>> cmd;
        Supplier<Mono<StatefulRedisPubSubConnection<String, String>>> ps;
        if (uri != null) {
            cmd = () -> Mono.fromCompletionStage(() -> client.connectAsync(StringCodec.UTF8, uri));
            ps = () -> Mono.fromCompletionStage(() -> client.connectPubSubAsync(StringCodec.UTF8, uri));
        } else {
            cmd = () -> Mono.fromCallable(() -> client.connect(StringCodec.UTF8)).subscribeOn(Schedulers.boundedElastic());
            ps = () -> Mono.fromCallable(() -> client.connectPubSub(StringCodec.UTF8)).subscribeOn(Schedulers.boundedElastic());
        }
        return new RedisLockBackend(options, cmd, ps, true, false);
    }

    /**
     * The URI with its credentials answered at once, when they are constant. A URI with a user or a
     * password ({@code redis://user:pw@host}, {@code withAuthentication}) carries them as a provider that
     * answers {@code Mono.just(credentials)}, which Lettuce's handshake resolves with
     * {@code thenComposeAsync} on the common pool — on a machine with two cores a new thread per connect
     * — and a refused handshake ({@code WRONGPASS}, {@code NOPERM}) is then failed from that thread,
     * where it races the channel's close: the connect can end with "Connection closed prematurely"
     * instead of the server's answer. A provider that answers at once is used on the event loop.
     * Credentials that are looked up (any other provider) are left to Lettuce as they are.
     */
    static @Nullable RedisURI immediateCredentials(@Nullable RedisURI uri) {
        RedisCredentialsProvider provider = uri == null ? null : uri.getCredentialsProvider();
        if (provider == null || provider instanceof RedisCredentialsProvider.ImmediateRedisCredentialsProvider
                || !(provider.resolveCredentials() instanceof Fuseable.ScalarCallable<?> constant)) {
            return uri;
        }
        RedisCredentials credentials;
        try {
            credentials = (RedisCredentials) constant.call();
        } catch (Exception e) {
            return uri;
        }
        if (credentials == null) {
            return uri;
        }
        RedisURI copy = new RedisURI(uri) { }; // every setting of the application's URI, which stays as it is
        copy.setCredentialsProvider(new StaticCredentialsProvider(credentials));
        return copy;
    }

    /**
     * Creates a backend over a Redis Cluster. It opens, fully asynchronously on the first
     * subscribed operation, one cluster connection for the scripts (Lettuce routes each script by
     * the slot of its keys, which share one hash tag per name) and one cluster pub/sub connection
     * for the release notifications ({@code PUBLISH} inside the scripts, which Redis Cluster
     * forwards to every node; the subscription lives on Lettuce's default node connection, which
     * follows topology changes). Renewal batches are always split per hash slot.
     * {@link RedisLockOptions#uri()} is ignored: the client's seed URIs are used.
     *
     * <p>For the lock client to follow a failover, the application's client should refresh its
     * topology when the cluster changes:
     * {@code ClusterClientOptions.builder().topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
     * .enableAllAdaptiveRefreshTriggers().enablePeriodicRefresh(Duration.ofSeconds(30)).build())}.
     *
     * @param client  the application's cluster client (not closed by {@link #close()})
     * @param options the Redis settings
     * @return the backend
     */
    public static RedisLockBackend create(RedisClusterClient client, RedisLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        // an asynchronous connect needs the topology loaded; refreshPartitionsAsync loads it without blocking
        Mono<Void> topology = Mono.fromCompletionStage(client::refreshPartitionsAsync);
        Supplier<Mono<StatefulRedisClusterConnection<String, String>>> cmd =
                () -> topology.then(Mono.fromCompletionStage(() -> client.connectAsync(StringCodec.UTF8)));
        Supplier<Mono<StatefulRedisPubSubConnection<String, String>>> ps =
                () -> topology.then(Mono.fromCompletionStage(() -> client.connectPubSubAsync(StringCodec.UTF8)));
        return new RedisLockBackend(options, cmd, ps, true, true);
    }

    /**
     * Creates a backend over connections the application opened and keeps owning:
     * {@link #close()} does not close them. Both must use a UTF-8 string codec
     * ({@code StringCodec.UTF8}) and must not be shared with code that (un)subscribes the same
     * channels.
     *
     * @param connection the command connection
     * @param pubSub     the pub/sub connection for release notifications
     * @param options    the Redis settings ({@link RedisLockOptions#uri()} is ignored)
     * @return the backend
     */
    public static RedisLockBackend create(StatefulRedisConnection<String, String> connection,
                                          StatefulRedisPubSubConnection<String, String> pubSub,
                                          RedisLockOptions options) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(pubSub, "pubSub");
        return new RedisLockBackend(options, () -> Mono.just(connection), () -> Mono.just(pubSub), false, false);
    }

    /** @return the Redis settings of this backend */
    public RedisLockOptions options() {
        return options;
    }

    @Override
    public String name() {
        return "redis";
    }

    /**
     * One grant attempt (see the class documentation). A grant's validity starts when the script
     * was sent (on {@link GrantRequest#clock()}), after the connection was ready. Errors with a
     * {@link io.reactivelocks.LockBackendException}; cancelling does not recall a request already
     * sent (the engine releases a late grant by owner).
     */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return Mono.defer(() -> {
            String name = request.name();
            String base = keys.base(name);
            String[] k = {RedisKeys.lockIn(base), RedisKeys.fenceIn(base)};
            String[] a = {request.owner(), millis(request.leaseTime()), fenceTtlMs, RedisKeys.grantsChannelIn(base),
                    request.payload() == null ? "0" : "1", request.payload() == null ? "" : request.payload()};
            return onCommandsHere(c -> acquireOn(c, k, a, request)).onErrorMap(e -> RedisErrors.map(name, "acquire", e));
        });
    }

    private static Mono<Attempt> acquireOn(RedisScriptingReactiveCommands<String, String> c, String[] k, String[] a,
            GrantRequest request) {
        // the lease is timed from here, not from before a (first, lazy) connect
        long sentAt = request.clock().nanoTime();
        return LuaScript.ACQUIRE.run(c, ScriptOutputType.MULTI, k, a).next()
                .map(reply -> toAttempt((List<?>) reply, request.leaseTime(), sentAt));
    }

    /**
     * Leases renewed by one script call at most: Redis runs a script alone, so a call over 100,000
     * keys would stall every other client for tens of milliseconds; 256 keys take well under a
     * millisecond inside the server, and the calls of one batch are pipelined on the connection.
     */
    static final int MAX_RENEWALS_PER_CALL = 256;

    /**
     * Renews the batch with one script call per {@value #MAX_RENEWALS_PER_CALL} leases of one
     * lease time (and, with {@link RedisLockOptions#clusterSafeBatches()} or on a cluster, of one
     * Redis Cluster slot), all dispatched together: one write and one flush on the connection, one
     * round trip. Each call's arguments are encoded straight into the connection's buffer
     * ({@link RenewCall}). Errors when any call fails (renewal is idempotent, so the engine may
     * simply retry the batch).
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        Objects.requireNonNull(batch, "batch");
        return Mono.defer(() -> {
            if (batch.isEmpty()) {
                return Mono.just(List.<RenewOutcome>of());
            }
            Slices slices = slices(batch);
            return commands.get().flatMap(c -> renewSlices(c, batch, slices))
                    .onErrorMap(e -> RedisErrors.map(batch.size() == 1 ? batch.get(0).lock().name() : null, "renewal", e));
        });
    }

    /**
     * A batch cut into script calls: {@code index} lists the batch's positions call after call,
     * call {@code j} taking {@code index[starts[j]] .. index[starts[j + 1] - 1]} with lease time
     * {@code ms[j]}.
     */
    private record Slices(int[] index, int[] starts, long[] ms) {
        int count() {
            return ms.length;
        }
    }

    private Slices slices(List<RenewRequest> batch) {
        int n = batch.size();
        Duration first = batch.get(0).leaseTime();
        boolean uniform = true;
        for (int i = 1; i < n && uniform; i++) {
            Duration d = batch.get(i).leaseTime();
            uniform = d == first || d.equals(first);
        }
        if (uniform && !cluster && !options.clusterSafeBatches()) {
            // the usual case: one server, one lease time: consecutive slices, no grouping
            int[] index = new int[n];
            for (int i = 0; i < n; i++) {
                index[i] = i;
            }
            int k = (n + MAX_RENEWALS_PER_CALL - 1) / MAX_RENEWALS_PER_CALL;
            int[] starts = new int[k + 1];
            long[] ms = new long[k];
            long leaseMs = leaseMillis(first);
            for (int j = 0; j < k; j++) {
                starts[j] = j * MAX_RENEWALS_PER_CALL;
                ms[j] = leaseMs;
            }
            starts[k] = n;
            return new Slices(index, starts, ms);
        }
        // group by lease time (and slot): one call carries one lease time and, where needed, one slot
        boolean bySlot = cluster || options.clusterSafeBatches();
        Map<List<Long>, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            RenewRequest r = batch.get(i);
            long slot = bySlot ? SlotHash.getSlot(RedisKeys.bytes(keys.lock(r.lock().name()))) : -1;
            groups.computeIfAbsent(List.of(slot, leaseMillis(r.leaseTime())), g -> new ArrayList<>()).add(i);
        }
        int[] index = new int[n];
        List<Integer> starts = new ArrayList<>();
        List<Long> ms = new ArrayList<>();
        int at = 0;
        for (Map.Entry<List<Long>, List<Integer>> g : groups.entrySet()) {
            List<Integer> members = g.getValue();
            for (int from = 0; from < members.size(); from += MAX_RENEWALS_PER_CALL) {
                starts.add(at + from);
                ms.add(g.getKey().get(1));
            }
            for (int m : members) {
                index[at++] = m;
            }
        }
        int[] s = new int[starts.size() + 1];
        long[] m = new long[ms.size()];
        for (int j = 0; j < m.length; j++) {
            s[j] = starts.get(j);
            m[j] = ms.get(j);
        }
        s[m.length] = n;
        return new Slices(index, s, m);
    }

    private Mono<List<RenewOutcome>> renewSlices(StatefulConnection<String, String> c, List<RenewRequest> batch,
                                                 Slices slices) {
        int k = slices.count();
        List<AsyncCommand<String, String, boolean[]>> calls = new ArrayList<>(k);
        for (int j = 0; j < k; j++) {
            calls.add(RenewCall.command(batch, slices.index(), slices.starts()[j], slices.starts()[j + 1],
                    slices.ms()[j], prefixBytes, false));
        }
        c.dispatch(calls); // every call in one write and one flush: one round trip per batch
        RenewOutcome[] out = new RenewOutcome[batch.size()];
        return Flux.range(0, k)
                .flatMap(j -> Mono.fromFuture(calls.get(j))
                        .onErrorResume(LuaScript::isNoScript, e -> { // the server lost its script cache: EVAL once
                            AsyncCommand<String, String, boolean[]> eval = RenewCall.command(batch, slices.index(),
                                    slices.starts()[j], slices.starts()[j + 1], slices.ms()[j], prefixBytes, true);
                            c.dispatch(eval);
                            return Mono.fromFuture(eval);
                        })
                        .doOnNext(renewed -> {
                            int from = slices.starts()[j];
                            int to = slices.starts()[j + 1];
                            // one outcome per call (one lease time), not one per lease
                            RenewOutcome ok = RenewOutcome.renewed(batch.get(slices.index()[from]).leaseTime());
                            for (int i = from; i < to; i++) {
                                int at = i - from;
                                out[slices.index()[i]] = at < renewed.length && renewed[at] ? ok : RenewOutcome.notHeld();
                            }
                        }), Integer.MAX_VALUE)
                .then(Mono.fromSupplier(() -> java.util.Arrays.asList(out)));
    }

    private static long leaseMillis(Duration d) {
        return Math.max(1L, d.toMillis());
    }

    /** Owner-checked delete; publishes the release. Errors with a {@link io.reactivelocks.LockBackendException}. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> onCommandsHere(c -> releaseOn(c, name, owner)).onErrorMap(e -> RedisErrors.map(name, "release", e)));
    }

    private Mono<Boolean> releaseOn(RedisScriptingReactiveCommands<String, String> c, String name, String owner) {
        String base = keys.base(name);
        return LuaScript.RELEASE.<Object>run(c, ScriptOutputType.INTEGER,
                new String[] {RedisKeys.lockIn(base)}, owner, RedisKeys.channelIn(base)).next()
                .map(r -> Long.valueOf(1L).equals(r));
    }

    /**
     * Replaces the payload where the key still holds exactly this grant (owner and token), keeping
     * its TTL, and publishes {@code acquired:<token>:<owner>} so that observers re-read.
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> script(LuaScript.UPDATE, ScriptOutputType.INTEGER, new String[] {keys.lock(lock.name())},
                        lock.owner(), Long.toString(lock.token()), payload == null ? "0" : "1",
                        payload == null ? "" : payload, keys.grantsChannel(lock.name()))
                .map(r -> Long.valueOf(1L).equals(r))
                .onErrorMap(e -> RedisErrors.map(lock.name(), "payload update", e)));
    }

    /** Reads the holder (owner, token, remaining TTL, payload); empty when free. */
    @Override
    public Mono<Holder> inspect(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> script(LuaScript.INSPECT, ScriptOutputType.MULTI, new String[] {keys.lock(name)})
                .flatMap(reply -> {
                    List<?> r = (List<?>) reply;
                    return r.isEmpty() ? Mono.<Holder>empty() : Mono.just(holder(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)));
                })
                .onErrorMap(e -> RedisErrors.map(name, "inspect", e)));
    }

    /**
     * The live waiters of the fair lock's queue ({@code :fair:deadlines} counted past the server's
     * {@code TIME}, one read-only script); {@code -1} when no fair lock waits on the name.
     */
    @Override
    public Mono<Integer> waiting(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> script(LuaScript.FAIR_WAITING, ScriptOutputType.INTEGER, new String[] {keys.fairDeadlines(name)})
                .map(r -> ((Number) r).intValue())
                .onErrorMap(e -> RedisErrors.map(name, "waiting count", e)));
    }

    /**
     * A revocation request: one {@code PUBLISH} on the lock's channel (see {@link PubSubChannels#revocation}).
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return publishRevocation(name, keys.channel(name), owner, reason);
    }

    /**
     * A revocation request on {@code channel}: one {@code PUBLISH} (the lock's, a semaphore's or a
     * read-write lock's channel).
     */
    Mono<Void> publishRevocation(String name, String channel, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> commands().flatMap(c -> RedisErrors.errorsAfterTheWrite(
                        c.publish(channel, PubSubChannels.revocation(owner, reason)))))
                .then()
                .onErrorMap(e -> RedisErrors.map(name, "revocation request", e));
    }

    /** Keys read per {@code SCAN} call while listing names. */
    private static final int SCAN_COUNT = 500;

    /**
     * The names with lock, semaphore or read-write state whose tag starts with the encoded
     * {@code prefix}: a {@code SCAN} whose {@code MATCH} is the key prefix, an opening brace, the
     * encoded {@code prefix} and {@code *} (on every master of a cluster: Lettuce's cluster
     * {@code SCAN} walks the masters one after another), each key's
     * tag decoded back to its name. The match may let through a name that does not start with
     * {@code prefix} (a prefix that ends inside an escaped byte); the admin compares literally.
     *
     * @param prefix the start of the names
     * @return each (concept, name) at most once per key; in the server's order
     */
    Flux<NameScan.Named> names(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        return Flux.defer(() -> {
            String match = glob(keys.prefix()) + '{' + RedisKeys.tag(scanPrefix(prefix)) + '*';
            ScanArgs args = ScanArgs.Builder.matches(match).limit(SCAN_COUNT);
            return commands().flatMapMany(c -> RedisErrors.errorsAfterTheWrite(ScanStream.scan(c, args)))
                    .<NameScan.Named>handle((key, sink) -> {
                        NameScan.Named n = named(key);
                        if (n != null) {
                            sink.next(n);
                        }
                    })
                    .onErrorMap(e -> RedisErrors.map(null, "name scan", e));
        });
    }

    /**
     * @param prefix a name prefix
     * @return the prefix without a trailing high surrogate: a lone one is encoded as its own
     *         three bytes, which are no prefix of the four bytes of the pair it starts
     */
    private static String scanPrefix(String prefix) {
        int n = prefix.length();
        return n > 0 && Character.isHighSurrogate(prefix.charAt(n - 1)) ? prefix.substring(0, n - 1) : prefix;
    }

    /** @return {@code s} with the glob characters of {@code MATCH} escaped */
    static String glob(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    /** @return the concept and name a key of this layout holds state of, or null for any other key */
    private NameScan.@Nullable Named named(String key) {
        String p = keys.prefix();
        int close = key.indexOf('}', p.length() + 1);
        if (!key.startsWith(p) || key.length() <= p.length() || key.charAt(p.length()) != '{' || close < 0) {
            return null;
        }
        Concept concept = switch (key.substring(close + 1)) {
            case ":lock" -> Concept.LOCK;
            case ":semaphore" -> Concept.SEMAPHORE;
            case ":rw" -> Concept.READ_WRITE_LOCK;
            case ":queue:claimed" -> Concept.TASK_QUEUE;
            default -> null;
        };
        if (concept == null) {
            return null;
        }
        try {
            return new NameScan.Named(concept, RedisKeys.untag(key.substring(p.length() + 1, close)));
        } catch (IllegalArgumentException notOurs) {
            return null; // a key under the prefix that this layout did not write
        }
    }

    /**
     * The lock's events from its two pub/sub channels, the lock's and its grants': {@code Subscribed}
     * once the server confirmed both {@code SUBSCRIBE}s (and again once both were re-established), then
     * {@code Acquired}/{@code Released} (never expiry) in the order the server ran them (one connection
     * carries both). Completes when the backend closes; errors when a subscription fails; cancelling
     * unsubscribes when this was the last subscriber of the name.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        Objects.requireNonNull(name, "name");
        return bothLive(channels.events(name, keys.channel(name)), channels.events(name, keys.grantsChannel(name)));
    }

    /**
     * A waiter's events: the lock's channel alone (releases and revocations), so that a grant's
     * {@code PUBLISH} reaches only the clients that observe the name.
     */
    @Override
    public Flux<LockEvent> wakeUps(String name) {
        Objects.requireNonNull(name, "name");
        return channels.events(name, keys.channel(name));
    }

    /** @return {@code true}: grants go to their own channel, which {@link #wakeUps} does not subscribe to */
    @Override
    public boolean wakeUpsOmitGrants() {
        return true;
    }

    /**
     * Two channels' events as one stream: every event of either, except that {@code Subscribed} is told when
     * both have said it as often (the first time once both are live; after a reconnect once both are again).
     */
    static Flux<LockEvent> bothLive(Flux<LockEvent> first, Flux<LockEvent> second) {
        return Flux.defer(() -> {
            long[] subscribed = new long[2]; // merge emits one at a time
            return Flux.merge(first.map(e -> new Object[] {0, e}), second.map(e -> new Object[] {1, e}))
                    .handle((tagged, sink) -> {
                        int side = (Integer) tagged[0];
                        LockEvent e = (LockEvent) tagged[1];
                        if (e instanceof LockEvent.Subscribed) {
                            subscribed[side]++;
                            if (subscribed[side] > subscribed[1 - side]) {
                                return; // the other channel has not said it this often yet
                            }
                        }
                        sink.next(e);
                    });
        });
    }

    /**
     * Closes the connections this backend opened (not the {@code RedisClient}, not connections
     * passed in) and completes every events stream. Idempotent.
     */
    @Override
    public Mono<Void> close() {
        return close;
    }

    // ---- for the quorum backend, the window store and the fenced values

    /**
     * Quorum mode: raises this server's counter to {@code token} and rewrites the lock value with
     * it, where {@code owner} still holds the lock.
     */
    Mono<Boolean> ratchet(String name, String owner, long token) {
        return Mono.defer(() -> script(LuaScript.RATCHET, ScriptOutputType.INTEGER,
                        new String[] {keys.lock(name), keys.fence(name)}, owner, Long.toString(token), fenceTtlMs,
                        keys.channel(name))
                .map(r -> Long.valueOf(1L).equals(r))
                .onErrorMap(e -> RedisErrors.map(name, "token ratchet", e)));
    }

    RedisKeys keys() {
        return keys;
    }

    String fenceTtlMs() {
        return fenceTtlMs;
    }

    /**
     * @param queue a task queue name
     * @return the queue's events on the shared pub/sub connection: {@code Subscribed} when the
     *         subscription is live (again), {@code Released} when tasks became capturable
     */
    Flux<LockEvent> queueEvents(String queue) {
        return channels.events(queue, keys.queueChannel(queue));
    }

    /**
     * The events of a semaphore or read-write lock on the shared pub/sub connection, as a lock's: its channel,
     * and for an observer also its grants' channel ({@link #bothLive}).
     *
     * @param name   the semaphore's or lock's name
     * @param channel its channel (releases, revocations)
     * @param grants  its grants' channel, or {@code null} for a waiter's stream (no grants)
     * @return the events
     */
    Flux<LockEvent> grantEvents(String name, String channel, @Nullable String grants) {
        return grants == null ? channels.events(name, channel)
                : bothLive(channels.events(name, channel), channels.events(name, grants));
    }

    /** @return the commands of the connection (one server, or the cluster), opened on first use */
    Mono<RedisClusterReactiveCommands<String, String>> commands() {
        return commands.get().map(RedisLockBackend::reactive);
    }

    /**
     * @return the commands to use at once: the inline pub/sub connection's or those of the open command connection;
     *     {@code null} when the command connection is not open (or closed), so that the caller waits for it
     *     ({@link #onCommandsHere})
     */
    private @Nullable RedisScriptingReactiveCommands<String, String> commandsReady() {
        if (!cluster) {
            StatefulRedisPubSubConnection<String, String> inline = channels.inlineConnection();
            if (inline != null) {
                return inline.reactive();
            }
        }
        StatefulConnection<String, String> c = commands.ready();
        return c == null ? null : reactive(c);
    }

    /**
     * Runs {@code call} on the commands of the pub/sub connection when the caller runs on its event loop
     * and it can carry commands ({@link PubSubChannels#inlineConnection()}; never on a cluster, whose
     * pub/sub connection talks to one node only), else on those of the command connection: at once when
     * one is ready ({@link #commandsReady()}, no operators around the call), else once connected
     * ({@link #commands()}).
     */
    private <T> Mono<T> onCommandsHere(java.util.function.Function<RedisScriptingReactiveCommands<String, String>, Mono<T>> call) {
        RedisScriptingReactiveCommands<String, String> ready = commandsReady();
        return ready != null ? call.apply(ready) : commands().flatMap(call::apply);
    }

    /** @return whether this backend talks to a Redis Cluster */
    boolean isCluster() {
        return cluster;
    }

    /** Runs a script of this package on the command connection; one reply. */
    Mono<Object> script(LuaScript script, ScriptOutputType type, String[] k, String... a) {
        return Mono.defer(() -> {
            StatefulConnection<String, String> ready = commands.ready(); // open: straight to the script
            return ready != null ? script.<Object>run(reactive(ready), type, k, a).next()
                    : commands().flatMap(c -> script.<Object>run(c, type, k, a).next());
        });
    }

    private static RedisClusterReactiveCommands<String, String> reactive(StatefulConnection<String, String> c) {
        if (c instanceof StatefulRedisClusterConnection<String, String> cluster) {
            return cluster.reactive();
        }
        return ((StatefulRedisConnection<String, String>) c).reactive();
    }

    // ---- helpers

    private Mono<Void> doClose() {
        Mono<Void> ps = channels.close();
        Mono<Void> cmd = commands.close(c -> { });
        return Mono.when(ps.onErrorResume(e -> Mono.empty()), cmd.onErrorResume(e -> Mono.empty()));
    }

    private static Attempt toAttempt(List<?> reply, Duration leaseTime, long sentAt) {
        if (Long.valueOf(1L).equals(reply.get(0))) {
            return new Attempt.Granted(Long.parseLong(String.valueOf(reply.get(1))), leaseTime, sentAt);
        }
        return Attempt.busy(holder(reply.get(1), reply.get(2), reply.get(3), reply.get(4), reply.get(5)));
    }

    private static Holder holder(Object token, Object pttl, Object owner, Object hasPayload, Object payload) {
        long ms = ((Number) pttl).longValue();
        return new Holder(String.valueOf(owner), Long.parseLong(String.valueOf(token)), ms >= 0 ? Duration.ofMillis(ms) : null,
                Long.valueOf(1L).equals(hasPayload) ? String.valueOf(payload) : null);
    }

    static String millis(Duration d) {
        Millis last = lastMillis;
        if (last.duration.equals(d)) {
            return last.text; // nearly every call asks for the same lease time: formatted once
        }
        String text = Long.toString(Math.max(1L, d.toMillis()));
        lastMillis = new Millis(d, text);
        return text;
    }

    /** The last duration {@link #millis} formatted, and its text. */
    private record Millis(Duration duration, String text) {
    }

    private static volatile Millis lastMillis = new Millis(Duration.ZERO, "1");

    @Override
    public String toString() {
        return "RedisLockBackend{" + options + "}";
    }
}
