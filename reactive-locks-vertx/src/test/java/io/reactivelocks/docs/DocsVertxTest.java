package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.local.LocalWindowStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.vertx.LockStream;
import io.reactivelocks.vertx.VertxFencedValues;
import io.reactivelocks.vertx.VertxLeaderElection;
import io.reactivelocks.vertx.VertxLockStore;
import io.reactivelocks.vertx.VertxLocks;
import io.reactivelocks.vertx.VertxMultiLock;
import io.reactivelocks.vertx.VertxReadWriteLock;
import io.reactivelocks.vertx.VertxSemaphore;
import io.reactivelocks.vertx.VertxTaskQueue;
import io.reactivelocks.vertx.VertxWindowLock;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The samples of docs/vertx.md (and the README's Vert.x quick start), run on the in-memory stores. */
class DocsVertxTest {

    static final long STEP_SECONDS = 10;

    private final Vertx vertx = Vertx.vertx();
    private final List<String> log = new CopyOnWriteArrayList<>();

    private final VertxLocks locks = VertxLocks.create(vertx, LocalLockBackend.client());

    @AfterEach
    void close() throws Exception {
        join(locks.close());
        join(vertx.close());
    }

    @Test
    void withLock() throws Exception {
        // tag::quick-start[]
        VertxLocks orders = VertxLocks.create(vertx, LocalLockBackend.client());   // any LockClient: store.locks(), ...
        Future<String> receipt = orders.withLock("order:42",       // completed on the caller's context
                lease -> charge("order:42", lease.token()));        // the body returns a Future
        // end::quick-start[]
        assertThat(join(receipt)).startsWith("charged order:42 with fence ");
        join(orders.close());
    }

    @Test
    void holdStream() throws Exception {
        // tag::hold[]
        LockStream<Lease> held = locks.hold("scheduler")
                .handler(lease -> startScheduling(lease.token()))   // granted, and again after each renewal
                .endHandler(lost -> stopScheduling());              // the lease was lost
        // ...
        Future<Void> stopped = held.cancel();                       // releases, or leaves the queue
        // end::hold[]
        join(stopped);
        await().atMost(STEP_SECONDS, TimeUnit.SECONDS).until(() -> join(locks.inspect("scheduler")) instanceof LockState.Free);
    }

    @Test
    void theOtherConcepts() throws Exception {
        // tag::concepts[]
        VertxSemaphore exports = VertxSemaphore.create(vertx, Semaphore.create(new LocalSemaphoreStore()));
        Future<String> exported = exports.withPermit("exports", 4, permit -> runExport(permit.token()));

        VertxWindowLock hourly = VertxWindowLock.create(vertx, WindowLock.create(new LocalWindowStore()));
        Future<WindowClaim> claim = hourly.tryClaim("report", Duration.ofHours(1));   // null: taken this hour

        VertxLeaderElection elections = VertxLeaderElection.create(vertx, LeaderElection.create(locks.client()));
        LockStream<Leadership> terms = elections.campaign("scheduler", "node-1:8080")
                .handler(term -> startScheduling(term.token()))     // elected, and again after each renewal
                .endHandler(lost -> stopScheduling());              // cancel() resigns
        // end::concepts[]
        assertThat(join(exported)).startsWith("export with fence ");
        assertThat(join(claim)).isNotNull();
        assertThat(join(hourly.tryClaim("report", Duration.ofHours(1)))).isNull();
        await().atMost(STEP_SECONDS, TimeUnit.SECONDS).until(() -> !log.isEmpty());
        assertThat(join(elections.leader("scheduler")).value()).isEqualTo("node-1:8080");
        join(terms.cancel());
        join(exports.close());
        join(hourly.close());
    }

    @Test
    void sessionAndEveryConcept() throws Exception {
        // tag::session[]
        VertxLockStore store = VertxLockStore.create(vertx, LocalLocks.open());   // or RedisLocks.connect(redis), ...
        VertxLocks locks = store.locks();
        VertxReadWriteLock catalog = store.readWriteLocks(LockOptions.defaults());
        VertxMultiLock accounts = store.multiLocks(LockOptions.defaults());
        VertxFencedValues values = store.fencedValues();
        VertxTaskQueue emails = store.taskQueue(LockOptions.defaults());
        // end::session[]

        // tag::read-write[]
        Future<String> read = catalog.withReadLock("catalog", lease -> readCatalog());             // readers share
        Future<String> rebuilt = catalog.withWriteLock("catalog", lease -> rebuild(lease.token()));   // one writer, no reader
        // end::read-write[]
        assertThat(join(read)).isEqualTo("catalog");
        assertThat(join(rebuilt)).startsWith("rebuilt with fence ");

        // tag::multi[]
        Future<String> moved = accounts.withLocks(List.of("account:1", "account:2"),   // all or none, in one order
                both -> transfer(both.token("account:1"), both.token("account:2")));
        // end::multi[]
        assertThat(join(moved)).startsWith("moved with fences ");

        // tag::fenced[]
        Future<Boolean> written = locks.withLock("config",
                lease -> values.write("config", lease.token(), "{\"limit\":10}"));   // false: a newer token wrote first
        // end::fenced[]
        assertThat(join(written)).isTrue();
        assertThat(join(values.read("config"))).extracting(FencedValue::value).isEqualTo("{\"limit\":10}");

        // tag::task-queue[]
        emails.register("emails", "welcome:42", 3, "ann@example.com");
        LockStream<TaskClaim> claims = emails.capture("emails").pause();   // captures only what is fetched
        claims.handler(claim -> emails.process(claim, c -> send(c.payload(), c.token()))   // done; failed: one retry less
                        .onComplete(done -> claims.fetch(1)))                                 // one task at a time
                .fetch(1);
        // claims.cancel() stops capturing; claims captured and not delivered go back to the queue
        // end::task-queue[]
        await().atMost(STEP_SECONDS, TimeUnit.SECONDS)
                .until(() -> join(emails.status("emails", "welcome:42")).state() == TaskState.DONE);
        join(claims.cancel());
        assertThat(log).contains("sent to ann@example.com");
        join(store.close());
    }

    private Future<String> readCatalog() {
        return Future.succeededFuture("catalog");
    }

    private Future<String> rebuild(long token) {
        return Future.succeededFuture("rebuilt with fence " + token);
    }

    private Future<String> transfer(long from, long to) {
        return Future.succeededFuture("moved with fences " + from + ", " + to);
    }

    private Future<String> send(String to, long token) {
        log.add("sent to " + to);
        return Future.succeededFuture("sent with fence " + token);
    }

    private void startScheduling(long token) {
        log.add("scheduling with fence " + token);
    }

    private void stopScheduling() {
        log.add("stopped");
    }

    private Future<String> charge(String order, long token) {
        return Future.succeededFuture("charged " + order + " with fence " + token);
    }

    private Future<String> runExport(long token) {
        return Future.succeededFuture("export with fence " + token);
    }

    private static <T> T join(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(STEP_SECONDS, TimeUnit.SECONDS);
    }
}
