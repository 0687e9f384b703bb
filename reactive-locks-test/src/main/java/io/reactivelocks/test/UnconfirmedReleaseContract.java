package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@code withLock} whose body finished while the store stopped answering (the server paused,
 * SIGSTOP or a paused container) keeps the body's value: the release the store cannot confirm
 * within the request timeout is reported (one listener event, the client's
 * {@code unconfirmedReleaseCount}, one WARN line naming the lock), not thrown. Once the server
 * answers again, the store must hold nothing for the name within a bounded time — by its own
 * expiry or by the client's clean-up, whichever the store has — and another client takes the lock.
 *
 * <p>A store's test extends this class and supplies a backend, the pause and resume of its server
 * and a look at what the server holds for a name. A store whose keys live on a session (etcd,
 * ZooKeeper) gives its backend a session well beyond the pause and checks, in
 * {@link #assertSessionKept}, that it survived: the name is then cleaned up by the client, not by
 * the end of the session (which a running application never reaches).
 */
public abstract class UnconfirmedReleaseContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(15);

    /**
     * The holder's listener events, renewals left out: granted; released by its owner (the lease is
     * given up at once, before the store answers); the store did not confirm it.
     */
    private static final String[] EXPECTED_EVENTS = {"acquired", "released", "releaseUnconfirmed"};

    private final List<LockClient> clients = new ArrayList<>();
    private volatile boolean paused;

    /** @return a new, independent backend (its own connections; a session well beyond a few seconds' pause) */
    protected abstract LockBackend newBackend();

    /** Freezes the server (it keeps its connections and state, and answers nothing). Blocking. */
    protected abstract void pauseServer();

    /** Lets the frozen server go on. Blocking. */
    protected abstract void resumeServer();

    /**
     * @param name a lock name
     * @return what the server holds for {@code name} — keys, rows or nodes, expired or not — read
     *         straight from it; empty when nothing
     */
    protected abstract List<String> storedFor(String name);

    /**
     * Called once the name was cleaned up: a store whose keys live on a session checks that
     * {@code backend}'s session is still the one that held the lock (so the clean-up was the
     * client's, not the session's end). The default does nothing.
     *
     * @param backend the holder's backend
     */
    protected void assertSessionKept(LockBackend backend) {
    }

    /**
     * @return the holder's options: a short request timeout (the release gives up after it), a lease
     *         of a few seconds and a drift allowance wide enough for a loaded test machine
     */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofSeconds(4))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    @AfterEach
    void resumeAndClose() {
        if (paused) {
            resumeServer();
            paused = false;
        }
        for (LockClient c : clients) {
            c.close().onErrorResume(e -> Mono.empty()).block(STEP);
        }
        clients.clear();
    }

    /** Connects {@code client} (and opens its session, if the store has one) before the test's own lock. */
    private static void warmUp(LockClient client) {
        client.withLock("warm-up-" + UUID.randomUUID(), lease -> Mono.just(true)).block(STEP);
    }

    private LockClient client(LockBackend backend, LockListener listener) {
        LockClient c = LockClient.create(backend, options(), listener);
        clients.add(c);
        return c;
    }

    @Test
    void aFinishedBodyKeepsItsValueWhenThePausedServerCannotConfirmTheReleaseAndNothingIsLeftAfterResume() {
        String name = "unconfirmed-" + UUID.randomUUID();
        Events events = new Events(name);
        LockBackend holderBackend = newBackend();
        LockClient holder = client(holderBackend, events);
        LockClient other = client(newBackend(), LockListener.NONE);
        warmUp(holder);
        warmUp(other);
        try (LogCapture log = new LogCapture()) {
            Integer result = holder.withLock(name, lease -> Mono.fromCallable(() -> {
                pauseServer();
                paused = true;
                return 42;
            }).subscribeOn(Schedulers.boundedElastic())).block(STEP);
            try {
                assertThat(paused).as("the server was paused by the body").isTrue();
                assertThat(result).as("the body's value").isEqualTo(42);
                assertThat(events.withoutRenewals()).as("listener events of '%s' (renewals left out)", name)
                        .containsExactly(EXPECTED_EVENTS);
                assertThat(holder.metrics().unconfirmedReleaseCount()).isEqualTo(1);
                assertThat(holder.metrics().heldLeaseCount()).isZero();
            } finally {
                resumeServer();
                paused = false;
            }

            // cleaned up by the store's expiry or the client, without anyone taking the lock (the
            // checking connection may still be reconnecting after the pause: its errors are retried)
            await().atMost(STEP).ignoreExceptions().untilAsserted(() ->
                    assertThat(storedFor(name)).as("what the server holds for '%s' after the resume", name).isEmpty());
            assertSessionKept(holderBackend);

            Lease next = other.acquire(name).block(STEP);
            assertThat(next).as("another client's lease").isNotNull();
            next.release().block(STEP);
            await().atMost(STEP).untilAsserted(() -> assertThat(storedFor(name)).as("held for '%s' at the end", name).isEmpty());

            assertThat(events.withoutRenewals()).as("listener events of '%s' at the end", name).containsExactly(EXPECTED_EVENTS);
            assertThat(events.afterRelease()).as("events of '%s' after the release: renewal stopped", name)
                    .containsExactly("releaseUnconfirmed");
            assertThat(holder.metrics().unconfirmedReleaseCount()).isEqualTo(1);
            // one WARN naming lock and reason: the release's own line, or — when the store stopped answering —
            // the outage line of the client, which names the release it could not confirm
            assertThat(log.lines()).as("WARN lines naming '%s'", name)
                    .filteredOn(l -> l.contains("WARN") && l.contains(name))
                    .singleElement().asString().containsPattern("did not confirm the release|did not answer release of lock");
        }
    }

    /** The events of one lock's leases, in order. */
    private static final class Events implements LockListener {
        private final List<String> seen = new CopyOnWriteArrayList<>();
        private final String lock;

        Events(String lock) {
            this.lock = lock;
        }

        /** @return the events but renewals (a renewal may or may not fall before the pause) */
        List<String> withoutRenewals() {
            return seen.stream().filter(e -> !e.equals("renewalStarted") && !e.equals("renewed")).toList();
        }

        /** @return every event after the release, renewals included */
        List<String> afterRelease() {
            List<String> all = List.copyOf(seen);
            int released = all.indexOf("released");
            return released < 0 ? all : all.subList(released + 1, all.size());
        }

        private void add(String name, String event) {
            if (name.equals(lock)) {
                seen.add(event);
            }
        }

        @Override
        public void onAcquireCancelled(String name, Duration waited) {
            add(name, "acquireCancelled");
        }

        @Override
        public void onAcquired(String name, long token, Duration waited) {
            add(name, "acquired");
        }

        @Override
        public void onContended(String name) {
            add(name, "contended");
        }

        @Override
        public void onAcquireFailed(String name, Throwable error, Duration waited) {
            add(name, "acquireFailed: " + error);
        }

        @Override
        public void onRenewalStarted(String name, long token) {
            add(name, "renewalStarted");
        }

        @Override
        public void onRenewed(String name, long token) {
            add(name, "renewed");
        }

        @Override
        public void onRenewalFailed(String name, long token, Throwable error) {
            add(name, "renewalFailed: " + error);
        }

        @Override
        public void onLost(String name, long token, String reason, Duration held) {
            add(name, "lost: " + reason);
        }

        @Override
        public void onReleased(String name, long token, Duration held) {
            add(name, "released");
        }

        @Override
        public void onReleaseUnconfirmed(String name, long token, Throwable error) {
            add(name, "releaseUnconfirmed");
        }
    }
}
