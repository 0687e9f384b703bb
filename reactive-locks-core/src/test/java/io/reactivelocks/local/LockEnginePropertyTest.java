package io.reactivelocks.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.stateful.Action;
import net.jqwik.api.stateful.ActionSequence;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A jqwik action-sequence property of the lock engine over the in-memory store on virtual time: three
 * clients acquire (waiting), cancel waits, release, let time pass (renewals, expiry of a dead holder's
 * grant), and close; a "dead holder" takes the lock directly on the store and never renews, so that its
 * grant expires. After every step: at most one valid holder of the lock (a client's live lease with time
 * left, or the dead holder before its expiry), tokens of grants strictly increasing, nothing of a
 * closed client left on the store, and no orphan grant (the store's holder is the dead holder or a lease
 * an open client holds — a cancelled wait leaves nothing behind). At the end every client closes and the store holds nothing. jqwik
 * shrinks a failing sequence to a shortest one.
 *
 * <p>200 sequences in the build; {@code -Djqwik.tries.default=5000} for a longer search.
 */
class LockEnginePropertyTest {

    static final String NAME = "x";
    static final Duration LEASE = Duration.ofSeconds(3);
    static final Duration VERIFY = Duration.ofSeconds(10);

    /** The system under test and what the test knows about it. */
    static final class World {
        final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        final LockClock clock = LockClock.of(vts);
        final LocalLockStore store = new LocalLockStore(vts, clock);
        final LockOptions options = LockOptions.builder().leaseTime(LEASE).drift(0, Duration.ZERO)
                .waitTimeout(Duration.ofSeconds(20)).scheduler(vts).clock(clock).build();
        final LockClient[] clients = new LockClient[3];
        final boolean[] closed = new boolean[3];
        final List<List<Disposable>> waits = new ArrayList<>();
        final List<List<Lease>> leases = new ArrayList<>();
        final List<String> closedOwners = new ArrayList<>();
        long highestToken = Long.MIN_VALUE;
        final List<String> violations = new ArrayList<>();
        long ghosts;
        long ghostExpiresAt = Long.MIN_VALUE;

        World() {
            for (int i = 0; i < clients.length; i++) {
                clients[i] = LockClient.create(new LocalLockBackend(store), options);
                waits.add(new ArrayList<>());
                leases.add(new ArrayList<>());
            }
        }

        void granted(long token, String who) {
            if (token <= highestToken) {
                violations.add("token " + token + " granted to " + who + " after token " + highestToken);
            }
            highestToken = Math.max(highestToken, token);
        }

        void flush() {
            vts.advanceTime(); // run what is due now
        }

        /** The invariants, after every step. */
        void check() {
            assertThat(violations).as("token order").isEmpty();
            long now = clock.nanoTime();
            List<String> valid = new ArrayList<>();
            for (int i = 0; i < clients.length; i++) {
                if (closed[i]) {
                    continue;
                }
                for (Lease l : clients[i].metrics().heldLeases()) {
                    if (l.name().equals(NAME) && l.validUntilNanos() - now > 0) {
                        valid.add("client " + i + " token " + l.token() + " valid for " + (l.validUntilNanos() - now) + " ns");
                    }
                }
            }
            if (ghostExpiresAt != Long.MIN_VALUE && ghostExpiresAt - now > 0) {
                valid.add("dead holder, expiring in " + (ghostExpiresAt - now) + " ns");
            }
            assertThat(valid).as("valid holders of " + NAME).hasSizeLessThanOrEqualTo(1);
            var holder = store.inspect(NAME);
            if (holder != null) {
                assertThat(closedOwners).as("the store's holder is not a closed client's").doesNotContain(holder.owner());
                // no orphan: the store's holder is the dead holder or a lease an open client knows it holds
                List<String> known = new ArrayList<>();
                for (int i = 0; i < clients.length; i++) {
                    if (!closed[i]) {
                        clients[i].metrics().heldLeases().forEach(l -> known.add(l.owner()));
                    }
                }
                if (!holder.owner().startsWith("dead-")) {
                    assertThat(known).as("the store's holder %s (token %d) is a lease an open client holds", holder.owner(),
                            holder.token()).contains(holder.owner());
                }
            }
        }

        void closeAll() {
            for (int i = 0; i < clients.length; i++) {
                if (!closed[i]) {
                    close(i);
                }
            }
            vts.advanceTimeBy(LEASE.multipliedBy(2)); // a dead holder's grant expires
            assertThat(store.inspect(NAME)).as("nothing left on the store after every client closed").isNull();
            vts.dispose();
        }

        void close(int i) {
            for (Lease l : leases.get(i)) {
                closedOwners.add(l.owner());
            }
            for (Lease l : clients[i].metrics().heldLeases()) {
                closedOwners.add(l.owner());
            }
            clients[i].close().subscribe();
            closed[i] = true;
            flush();
        }
    }

    @Property
    void atMostOneHolderAndIncreasingTokens(@ForAll("sequences") ActionSequence<World> actions) {
        World world = new World();
        try {
            actions.withInvariant(World::check).run(world);
            world.closeAll();
        } finally {
            world.vts.dispose();
        }
    }

    @Provide
    Arbitrary<ActionSequence<World>> sequences() {
        Arbitrary<Integer> client = Arbitraries.integers().between(0, 2);
        return Arbitraries.sequences(Arbitraries.oneOf(
                client.map(Acquire::new),
                client.map(Cancel::new),
                client.map(Release::new),
                client.map(Close::new),
                Arbitraries.just(new DeadHolder()),
                Arbitraries.longs().between(1, 4_000).map(Advance::new))).ofSize(30);
    }

    /** A client starts to wait for the lock. */
    record Acquire(int client) implements Action<World> {
        @Override
        public boolean precondition(World w) {
            return !w.closed[client];
        }

        @Override
        public World run(World w) {
            w.waits.get(client).add(w.clients[client].acquire(NAME).subscribe(lease -> {
                w.granted(lease.token(), "client " + client);
                w.leases.get(client).add(lease);
            }, error -> { }));
            w.flush();
            return w;
        }
    }

    /** A client cancels its latest wait (or its latest acquire, granted or not: cancelling then is a no-op). */
    record Cancel(int client) implements Action<World> {
        @Override
        public boolean precondition(World w) {
            return !w.closed[client] && !w.waits.get(client).isEmpty();
        }

        @Override
        public World run(World w) {
            List<Disposable> waits = w.waits.get(client);
            waits.remove(waits.size() - 1).dispose();
            w.flush();
            return w;
        }
    }

    /** A client releases its oldest lease. */
    record Release(int client) implements Action<World> {
        @Override
        public boolean precondition(World w) {
            return !w.closed[client] && !w.leases.get(client).isEmpty();
        }

        @Override
        public World run(World w) {
            w.leases.get(client).remove(0).release().subscribe(v -> { }, e -> { });
            w.flush();
            return w;
        }
    }

    /** A client closes (its leases are released, its waits end). */
    record Close(int client) implements Action<World> {
        @Override
        public boolean precondition(World w) {
            return !w.closed[client];
        }

        @Override
        public World run(World w) {
            w.close(client);
            return w;
        }
    }

    /** A holder that dies at once takes the lock on the store when it is free; its grant expires a lease later. */
    record DeadHolder() implements Action<World> {
        @Override
        public World run(World w) {
            String owner = "dead-" + w.ghosts++;
            LocalLockStore.GrantResult r = w.store.grant(NAME, owner, LEASE, null);
            if (r.granted()) {
                w.granted(r.token(), owner);
                w.ghostExpiresAt = w.clock.nanoTime() + LEASE.toNanos();
            }
            w.flush();
            return w;
        }
    }

    /** Virtual time passes: renewals, waits, expiries. */
    record Advance(long millis) implements Action<World> {
        @Override
        public World run(World w) {
            w.vts.advanceTimeBy(Duration.ofMillis(millis));
            return w;
        }
    }
}
