package io.reactivelocks.examples.vertx;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.vertx.ContextBridge;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A Vert.x verticle that, on its event loop and without ever blocking it:
 * <ul>
 *   <li>runs a job <b>at most once per window across all instances</b>: a periodic timer tries
 *       {@link WindowLock#tryClaim(String, Duration)} every {@link ServiceOptions#tickInterval()};
 *       the instance whose claim wins runs the job for that window, the others get nothing;</li>
 *   <li><b>elects a leader</b>: every instance campaigns with {@link LeaderElection#campaign} on
 *       {@link ServiceOptions#leaderLock()} with its instance id as value; the one elected leads
 *       ({@link #isLeader()}). When its campaign completes (leadership was lost) it campaigns
 *       again at once; on an error it campaigns again after a third of the lease time;</li>
 *   <li>serves {@code GET /status}: {@code {"instance": ..., "leader": true|false, "runs": n}}.</li>
 * </ul>
 *
 * <p>Reactor publishers are subscribed from the verticle's context, and their signals come back to
 * it through {@code publishOn} a scheduler that runs tasks with {@code Context.runOnContext}, or
 * through {@code Future.fromCompletionStage(mono.toFuture(), context)}: the verticle's state is
 * only touched on its own event loop. The one blocking step, connecting to Redis, runs on a worker
 * thread ({@code executeBlocking}) during {@link #start()}. Undeploying the verticle
 * ({@link #stop()}) cancels the timer, releases the leader lease, closes the lock client and the
 * two Redis connections; the {@link RedisClient} stays the caller's to shut down.
 */
public final class VertxLockService extends VerticleBase {

    private final RedisClient redis;
    private final RedisURI uri;
    private final ServiceOptions options;
    private final Handler<WindowClaim> job;

    private final AtomicLong runs = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private volatile boolean leader;
    private volatile int httpPort = -1;

    // confined to the verticle's event loop
    private Scheduler onContext;
    private Connections connections;
    private LockClient locks;
    private WindowLock windowLock;
    private long timerId = -1;
    private boolean claiming;
    private boolean stopped;
    private long campaigns; // signals of an older campaign's hold stream are ignored
    private Disposable hold;
    private Leadership term;
    private HttpServer server;

    /**
     * Builds the service; nothing connects before it is deployed.
     *
     * @param redis   the application's Redis client (not shut down by this service)
     * @param uri     the Redis server to connect to
     * @param options this instance's settings
     * @param job     the job, called on the event loop with the claim of each window this instance
     *                won; it must not block (hand blocking work to {@code executeBlocking})
     */
    public VertxLockService(RedisClient redis, RedisURI uri, ServiceOptions options, Handler<WindowClaim> job) {
        this.redis = Objects.requireNonNull(redis, "redis");
        this.uri = Objects.requireNonNull(uri, "uri");
        this.options = Objects.requireNonNull(options, "options");
        this.job = Objects.requireNonNull(job, "job");
    }

    /**
     * Connects to Redis on a worker thread, then (on the event loop) starts campaigning, starts
     * the periodic timer and the status endpoint.
     *
     * @return a future that completes when the status endpoint listens; it fails (leaving nothing
     *         open) when Redis cannot be reached within the URI's timeout or the port is taken
     */
    @Override
    public Future<?> start() {
        onContext = ContextBridge.scheduler(context);
        return vertx.executeBlocking(this::connect).compose(c -> {
            connections = c;
            locks = c.locks();
            windowLock = c.windowLock();
            campaign();
            timerId = vertx.setPeriodic(Math.max(1, options.tickInterval().toMillis()), id -> tick());
            return vertx.createHttpServer()
                    .requestHandler(this::handle)
                    .listen(options.httpPort());
        }).onSuccess(s -> {
            server = s;
            httpPort = s.actualPort();
        }).recover(e -> connections == null
                ? Future.failedFuture(e)
                // Vert.x does not undeploy a verticle whose start failed: clean up here
                : stop().transform(ignored -> Future.failedFuture(e)));
    }

    /*
     * Runs on a worker thread: the set-up that is blocking or slow. Lettuce's first connection in a
     * JVM is expensive CPU work done on the calling thread even by connectAsync (it generates the
     * proxy class of its synchronous API: a few hundred ms on a busy machine); the Redis backend
     * reads its Lua scripts from the jar when first built; creating the lock client seeds its
     * owner-id generator (one read of /dev/urandom). None of that belongs on an event loop.
     */
    private Connections connect() {
        StatefulRedisConnection<String, String> commands = redis.connect(StringCodec.UTF8, uri);
        StatefulRedisPubSubConnection<String, String> pubSub;
        try {
            pubSub = redis.connectPubSub(StringCodec.UTF8, uri);
        } catch (RuntimeException e) {
            commands.closeAsync();
            throw e;
        }
        // one session for both lock kinds, over a backend that leaves the connections open: stop() closes them
        RedisLockBackend backend = RedisLockBackend.create(commands, pubSub, RedisLockOptions.defaults());
        LockStore store = RedisLocks.connect(backend);
        LockOptions lockOptions = LockOptions.builder().leaseTime(options.leaseTime()).build();
        return new Connections(commands, pubSub, store, store.locks(lockOptions), store.windowLocks(lockOptions));
    }

    private record Connections(StatefulRedisConnection<String, String> commands,
                               StatefulRedisPubSubConnection<String, String> pubSub,
                               LockStore store, LockClient locks, WindowLock windowLock) {

        Mono<Void> close() {
            return store.close().onErrorResume(e -> Mono.empty())
                    .then(Mono.when(Mono.fromCompletionStage(commands::closeAsync), Mono.fromCompletionStage(pubSub::closeAsync)));
        }
    }

    /**
     * Stops: cancels the timer and the hold stream, releases leadership, closes the lock client
     * and the status endpoint.
     *
     * @return a future that completes when the lease is released and the client closed
     */
    @Override
    public Future<?> stop() {
        stopped = true;
        vertx.cancelTimer(timerId);
        if (connections == null) {
            return Future.succeededFuture(); // start failed before connecting
        }
        Mono<Void> closed = resignNow().onErrorResume(e -> Mono.empty())
                .then(locks.close())
                .then(connections.close());
        Future<Void> done = ContextBridge.toFuture(closed, context);
        return server == null ? done : Future.all(done, server.close());
    }

    /**
     * Gives up leadership (if held) and campaigns again after one lease time, so that another
     * instance takes over. May be called from any thread.
     *
     * @return a future that completes once the lease is released
     */
    public Future<Void> resign() {
        Promise<Void> done = Promise.promise();
        context.runOnContext(ignored -> {
            if (stopped) {
                done.complete();
                return;
            }
            ContextBridge.toFuture(resignNow(), context)
                    .onComplete(done)
                    .onComplete(ar -> vertx.setTimer(Math.max(1, options.leaseTime().toMillis()), id -> {
                        if (!stopped && hold == null) {
                            campaign();
                        }
                    }));
        });
        return done.future();
    }

    /** @return whether this instance holds the leader lock now */
    public boolean isLeader() {
        return leader;
    }

    /** @return how many windows this instance has run the job for */
    public long runs() {
        return runs.get();
    }

    /** @return how many window claims and hold streams failed while the service ran */
    public long errors() {
        return errors.get();
    }

    /** @return the status endpoint's port, or {@code -1} before it listens */
    public int httpPort() {
        return httpPort;
    }

    /** @return this instance's settings */
    public ServiceOptions options() {
        return options;
    }

    /** @return the status document served by {@code GET /status} */
    public JsonObject status() {
        return new JsonObject()
                .put("instance", options.instance())
                .put("leader", leader)
                .put("runs", runs.get());
    }

    private void campaign() {
        if (stopped) {
            return;
        }
        long id = ++campaigns;
        hold = LeaderElection.create(locks).campaign(options.leaderLock(), options.instance())
                .publishOn(onContext)
                .subscribe(t -> {
                    if (id == campaigns) {
                        term = t;
                        leader = true;
                    }
                }, e -> {
                    if (id == campaigns) {
                        onHoldError();
                    }
                }, () -> {
                    if (id == campaigns) {
                        // leadership was lost (its lease could not be renewed in time): campaign again
                        lostLeadership();
                        campaign();
                    }
                });
    }

    private void onHoldError() {
        lostLeadership();
        if (!stopped) {
            errors.incrementAndGet();
            vertx.setTimer(Math.max(1, options.leaseTime().dividedBy(3).toMillis()), id -> {
                if (hold == null) {
                    campaign();
                }
            });
        }
    }

    private void lostLeadership() {
        leader = false;
        term = null;
        hold = null;
    }

    /*
     * Ends the current campaign. A leader resigns first and waits for the store to confirm (the
     * campaign then completes; its signals are ignored, as they belong to an old campaign); only
     * then is the campaign's subscription cancelled. Cancelling first would release too,
     * but without anyone waiting: closing the client right after could cut that release short.
     */
    private Mono<Void> resignNow() {
        Disposable h = hold;
        Leadership l = term;
        campaigns++;
        lostLeadership();
        if (l == null) {
            if (h != null) {
                h.dispose(); // still waiting to acquire: cancelling leaves nothing behind
            }
            return Mono.empty();
        }
        return l.resign().doFinally(signal -> {
            if (h != null) {
                h.dispose();
            }
        });
    }

    private void tick() {
        if (claiming || stopped) {
            return;
        }
        claiming = true;
        ContextBridge.toFuture(windowLock.tryClaim(options.jobName(), options.period()), context)
                .onComplete(ar -> {
                    claiming = false;
                    if (stopped) {
                        return;
                    }
                    if (ar.failed()) {
                        errors.incrementAndGet();
                    } else if (ar.result() != null) {
                        runs.incrementAndGet();
                        job.handle(ar.result());
                    }
                });
    }

    private void handle(HttpServerRequest request) {
        if (request.method() == HttpMethod.GET && "/status".equals(request.path())) {
            request.response()
                    .putHeader("content-type", "application/json")
                    .end(status().encode());
        } else {
            request.response().setStatusCode(404).end();
        }
    }
}
