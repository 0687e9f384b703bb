package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The waiting of a store-kept line of waiters — a fair (FIFO) lock on a store that does not queue
 * natively (Redis, PostgreSQL): each waiter has an entry with a deadline on the server, and asks
 * again when a release of the name is announced, when the store's hint says something may change
 * unannounced (the holder's or the head waiter's expiry), and at least every half of its entry's
 * life (which keeps the entry alive). The store supplies the one request ({@code ask}); this class
 * turns a "still in line" answer into {@link Attempt.Queued} whose turn is that wait.
 *
 * <p>When the store says how many waiters are ahead, a release wakes only the waiters it may have
 * made head, not the whole line (no herd): each waiter counts down its place on every grant to
 * another owner and every release of a waiter (or of an owner it cannot place) — a lower bound of
 * its place — and asks on a release once it counts itself head; every answer resets the count. A
 * waiter ahead that expires silently is caught by the hint or refresh timers.
 *
 * <p>An ask in flight when the turn is cancelled is followed to its end: a grant or a waiter's entry
 * that lands after the cancel is released at once (else it would block the line until its lease or
 * its deadline ran out).
 */
public final class WaiterLine {

    /**
     * The store's answer to a waiting request that is not granted yet: still in line.
     *
     * @param hintMs milliseconds until something may change without an announcement (the holder's
     *               lease or the head waiter's entry expiring), or {@code -1} when nothing will
     * @param ahead  how many waiters are in line before this one, or {@code -1} when the store does
     *               not say (then every release wakes this waiter to ask)
     * @param holder the owner that held the lock when the store answered, or {@code null} when the
     *               store does not say; its release then moves nobody in line, as once its grant was seen
     */
    public record StillQueued(long hintMs, long ahead, @Nullable String holder) {
        /** @param hintMs as above; the place in line and the holder unknown */
        public StillQueued(long hintMs) {
            this(hintMs, -1, null);
        }

        /**
         * @param hintMs as above
         * @param ahead  as above; the holder unknown
         */
        public StillQueued(long hintMs, long ahead) {
            this(hintMs, ahead, null);
        }
    }

    private final Function<GrantRequest, Mono<Object>> ask;
    private final Function<String, Flux<LockEvent>> events;
    private final BiFunction<String, String, Mono<Boolean>> release;
    private final Scheduler timers;

    /**
     * @param ask     one grant request: answers an {@link Attempt} or a {@link StillQueued}; lazy
     * @param events  the store's change stream of a name ({@link LockBackend#events})
     * @param release the store's owner-checked release, which also removes a waiter's entry
     * @param timers  where the waits are timed
     */
    public WaiterLine(Function<GrantRequest, Mono<Object>> ask, Function<String, Flux<LockEvent>> events,
                      BiFunction<String, String, Mono<Boolean>> release, Scheduler timers) {
        this.ask = Objects.requireNonNull(ask, "ask");
        this.events = Objects.requireNonNull(events, "events");
        this.release = Objects.requireNonNull(release, "release");
        this.timers = Objects.requireNonNull(timers, "timers");
    }

    /**
     * @param leaseTime a request's lease time
     * @return how long a waiter's entry lives without another ask: twice the lease time, at least
     *         one second (the turn asks again every half of it)
     */
    public static Duration waiterDeadline(Duration leaseTime) {
        Duration twice = leaseTime.multipliedBy(2);
        return twice.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : twice;
    }

    /**
     * One grant attempt: the store's answer, with a "still in line" answer turned into
     * {@link Attempt.Queued} whose turn waits as described above.
     *
     * @param request the grant request
     * @return the answer; lazy
     */
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return ask.apply(request).map(a -> a instanceof StillQueued q ? new Attempt.Queued(turn(request, q)) : (Attempt) a);
    }

    /** Asks again on a release (or a re-established change stream) and when the hint or refresh interval passes. */
    private Mono<Attempt> turn(GrantRequest request, StillQueued first) {
        long refreshMs = Math.max(1L, waiterDeadline(request.leaseTime()).toMillis() / 2);
        return Mono.defer(() -> {
            Place place = new Place(first.ahead(), first.holder());
            Sinks.Many<Long> delays = Sinks.many().unicast().onBackpressureBuffer();
            Flux<Object> timer = delays.asFlux()
                    .switchMap(ms -> Mono.delay(Duration.ofMillis(ms), timers))
                    .map(x -> (Object) x);
            Flux<Object> wakes = events.apply(request.name())
                    .filter(e -> place.wakes(e, request.owner()))
                    .map(e -> (Object) e);
            delays.tryEmitNext(delay(first.hintMs(), refreshMs));
            return Flux.merge(wakes, timer)
                    .onBackpressureLatest()
                    .concatMap(x -> Mono.defer(() -> {
                        long seen = place.asking();
                        return followedAsk(request).doOnNext(answer -> {
                            if (answer instanceof StillQueued q) {
                                place.answered(q.ahead(), q.holder(), seen);
                                delays.tryEmitNext(delay(q.hintMs(), refreshMs));
                            }
                        });
                    }), 1)
                    .filter(answer -> answer instanceof Attempt)
                    .cast(Attempt.class)
                    .next();
        });
    }

    /**
     * A waiter's estimate of its place in line, kept at or below the true one: counted down on every
     * grant to another owner than the holder known (a waiter ahead became the holder) and every release of an owner that
     * is not the holder last seen (a waiter ahead left, or unknown), reset by each answer minus what
     * was counted while that answer was on its way.
     */
    private static final class Place {
        private long ahead;      // guarded by this; -1: unknown (every release wakes)
        private long seen;       // guarded by this: count-downs so far
        private boolean asking;  // guarded by this
        private @Nullable String holder; // guarded by this: the owner of the last grant seen, until its release
        private long changes;    // guarded by this: grants and releases seen so far

        Place(long ahead, @Nullable String holder) {
            this.ahead = ahead;
            this.holder = holder;
        }

        private long changesAtAsk; // guarded by this

        /** @return the count-downs seen when an ask is sent */
        synchronized long asking() {
            asking = true;
            changesAtAsk = changes;
            return seen;
        }

        /** The answer's place, less what was counted since the ask; its holder, when nothing changed since. */
        synchronized void answered(long rank, @Nullable String holderNow, long seenAtAsk) {
            asking = false;
            ahead = rank < 0 ? -1 : Math.max(0, rank - (seen - seenAtAsk));
            if (holderNow != null && changes == changesAtAsk) {
                holder = holderNow;
            }
        }

        /**
         * Whether an event makes the waiter ask: a (re-)subscription always (a release may have been
         * missed); a release when the place is unknown, when the waiter counts itself head, or while an
         * ask is on its way (its answer may predate the release; the asks coalesce).
         */
        synchronized boolean wakes(LockEvent e, String owner) {
            if (e instanceof LockEvent.Subscribed) {
                return true;
            }
            if (e instanceof LockEvent.Acquired a) {
                changes++;
                // the grant of the holder already known (told in an answer, or seen again) moved nobody
                boolean known = a.owner() != null && a.owner().equals(holder);
                holder = a.owner();
                if (!known && !owner.equals(a.owner())) { // an unknown owner is someone else: this waiter still waits
                    countDown();
                }
                return false;
            }
            if (e instanceof LockEvent.Released r) {
                changes++;
                if (r.owner() == null) {
                    // a store that cannot say who released (a poller that folded changes): ask, never miss a turn
                    holder = null;
                    countDown();
                    return true;
                }
                boolean head = ahead <= 0;
                if (r.owner().equals(holder)) {
                    holder = null; // the holder left: the line did not move
                } else {
                    countDown();
                }
                return head || asking;
            }
            return false;
        }

        private void countDown() {
            seen++;
            if (ahead > 0) {
                ahead--;
            }
        }
    }

    /** An ask that a cancel does not abandon: a grant or an entry landing after it is released at once. */
    private Mono<Object> followedAsk(GrantRequest request) {
        return Mono.defer(() -> {
            Mono<Object> answer = ask.apply(request).cache(); // the cache keeps the request going when its subscriber leaves
            AtomicBoolean delivered = new AtomicBoolean();
            return answer.doOnNext(a -> delivered.set(true)).doOnCancel(() -> {
                if (delivered.get()) {
                    return; // cancelled while its answer went downstream (the turn ending on it): not abandoned
                }
                // the ask may reach the store after the release the cancel sent (it raced the cancel on
                // another thread): a grant, or an entry it put back in line, is released once it lands
                answer.subscribe(a -> release.apply(request.name(), request.owner())
                        .subscribe(null, e -> { /* the lease or the waiter's entry expires by its deadline */ }), e -> { });
            });
        });
    }

    private static long delay(long hintMs, long refreshMs) {
        // +1 ms to land after the holder's lease or the head waiter's entry has expired
        return hintMs < 0 ? refreshMs : Math.min(refreshMs, hintMs + 1);
    }
}
