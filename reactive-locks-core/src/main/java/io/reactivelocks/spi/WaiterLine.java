package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
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
 * made head, not the whole line (no herd): each waiter counts down its place on every release or
 * grant of another owner — a lower bound, since either may be the one ahead leaving — and asks on a
 * release once it counts itself head; every answer resets the count. A waiter ahead that expires
 * silently is caught by the hint or refresh timers.
 *
 * <p>An ask in flight when the turn is cancelled is followed to its end: a grant that lands after
 * the cancel is released at once (else it would block the line until its lease ran out).
 */
public final class WaiterLine {

    /**
     * The store's answer to a waiting request that is not granted yet: still in line.
     *
     * @param hintMs milliseconds until something may change without an announcement (the holder's
     *               lease or the head waiter's entry expiring), or {@code -1} when nothing will
     * @param ahead  how many waiters are in line before this one, or {@code -1} when the store does
     *               not say (then every release wakes this waiter to ask)
     */
    public record StillQueued(long hintMs, long ahead) {
        /** @param hintMs as above; the place in line unknown */
        public StillQueued(long hintMs) {
            this(hintMs, -1);
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
            AtomicLong ahead = new AtomicLong(first.ahead());
            Sinks.Many<Long> delays = Sinks.many().unicast().onBackpressureBuffer();
            Flux<Object> timer = delays.asFlux()
                    .switchMap(ms -> Mono.delay(Duration.ofMillis(ms), timers))
                    .map(x -> (Object) x);
            Flux<Object> wakes = events.apply(request.name())
                    .filter(e -> wakes(e, request.owner(), ahead))
                    .map(e -> (Object) e);
            delays.tryEmitNext(delay(first.hintMs(), refreshMs));
            return Flux.merge(wakes, timer)
                    .onBackpressureLatest()
                    .concatMap(x -> followedAsk(request), 1)
                    .doOnNext(answer -> {
                        if (answer instanceof StillQueued q) {
                            ahead.set(q.ahead());
                            delays.tryEmitNext(delay(q.hintMs(), refreshMs));
                        }
                    })
                    .filter(answer -> answer instanceof Attempt)
                    .cast(Attempt.class)
                    .next();
        });
    }

    /** An ask that a cancel does not abandon: a grant landing after it is released at once. */
    private Mono<Object> followedAsk(GrantRequest request) {
        return Mono.defer(() -> {
            Mono<Object> answer = ask.apply(request).cache(); // the cache keeps the request going when its subscriber leaves
            AtomicBoolean delivered = new AtomicBoolean();
            return answer.doOnNext(a -> delivered.set(true)).doOnCancel(() -> {
                if (delivered.get()) {
                    return; // cancelled while its answer went downstream (the turn ending on it): not abandoned
                }
                answer.subscribe(a -> {
                    if (a instanceof Attempt.Granted) {
                        release.apply(request.name(), request.owner()).subscribe(null, e -> { /* the lease expires by its TTL */ });
                    }
                }, e -> { });
            });
        });
    }

    /**
     * Whether an event makes the waiter ask: a (re-)subscription always (a release may have been
     * missed), a release when the place in line is unknown or the waiter counts itself head; a release
     * or another owner's grant counts the place down (never below 0).
     */
    private static boolean wakes(LockEvent e, String owner, AtomicLong ahead) {
        if (e instanceof LockEvent.Subscribed) {
            return true;
        }
        if (e instanceof LockEvent.Acquired a) {
            if (!a.owner().equals(owner)) {
                ahead.getAndUpdate(n -> n > 0 ? n - 1 : n);
            }
            return false;
        }
        if (e instanceof LockEvent.Released) {
            long before = ahead.getAndUpdate(n -> n > 0 ? n - 1 : n);
            return before <= 0;
        }
        return false;
    }

    private static long delay(long hintMs, long refreshMs) {
        // +1 ms to land after the holder's lease or the head waiter's entry has expired
        return hintMs < 0 ? refreshMs : Math.min(refreshMs, hintMs + 1);
    }
}
