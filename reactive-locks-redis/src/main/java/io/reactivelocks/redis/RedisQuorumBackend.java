package io.reactivelocks.redis;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Quorum mode (Redlock) over N independent Redis masters, each a {@link RedisLockBackend}, with
 * fencing tokens that never go backwards.
 *
 * <p><b>Grant.</b> The same grant script is sent to every instance at once, each bounded by the
 * instance timeout. The lock is ours when a majority ({@code N/2 + 1}) granted and the time spent
 * is below the validity, {@code TTL − elapsed − drift} (drift = 1% of the TTL + 2 ms; elapsed
 * counted from when the earliest granting instance's request was sent, which is also when the
 * returned grant's validity starts; the engine subtracts its own drift allowance on top). Then the
 * token is the <em>maximum</em> of the granting instances' tokens, and it is <em>ratcheted</em>
 * onto them before the lease is handed out: on each, where this owner still holds the key, the
 * counter becomes {@code max(counter, token)} and the lock value carries the token. The grant
 * stands only if a majority confirmed the ratchet (and the validity still holds). In every other
 * case the owner's keys are deleted on <em>all</em> instances (owner-checked; a request that
 * timed out may still land, and the release queues behind it on the same connection) and the
 * answer is busy — or a transient error when a majority did not answer. The engine's jittered
 * backoff is Redlock's random retry delay.
 *
 * <p><b>Why tokens stay monotonic.</b> Let grant G have token T, ratcheted onto a majority R.
 * Any later grant G' is granted by a majority M'; R and M' share at least one instance i. On i,
 * G' could only be granted after G's key there was gone, which is after the ratchet, so i's
 * counter was already ≥ T and i gave G' a token &gt; T; G' takes the maximum over M', so T' &gt; T.
 * An instance that restarts empty leaves R smaller; as long as a majority of R keeps its data,
 * the argument holds, and the restarted instance's own tokens start again from its clock in
 * microseconds, above any token it issued before. (Redlock's own safety after restarts also
 * needs delayed restarts or persistence; fencing tokens checked by the protected resource are
 * what makes the lock safe for correctness — the lock alone is not.)
 *
 * <p><b>Renew</b>: a lease is renewed when a majority renewed it (owner- and token-checked),
 * lost when a majority says it is not held, and the whole batch fails transiently otherwise (the
 * engine retries while time remains). <b>Release</b>: on all instances. <b>Inspect</b>: the owner and
 * token a majority agrees on (so a grant shows once its token is ratcheted), with the time until
 * fewer than a majority hold it. <b>Events</b>: all
 * instances' events merged; {@code Subscribed} once a majority's subscriptions are live.
 *
 * <p>Closing this backend closes every instance backend (which, in turn, never close the
 * {@code RedisClient}s).
 */
public final class RedisQuorumBackend implements LockBackend {

    /** Default bound of one request to one instance. */
    public static final Duration DEFAULT_INSTANCE_TIMEOUT = Duration.ofMillis(250);

    /** How long {@link #close()} waits for releases still in flight before it closes the instances. */
    static final Duration CLOSE_WAITS_FOR_RELEASES = Duration.ofSeconds(5);

    private static final double DRIFT_FACTOR = 0.01;
    private static final long DRIFT_CONSTANT_NANOS = Duration.ofMillis(2).toNanos();

    private final List<RedisLockBackend> instances;
    private final int quorum;
    private final Duration instanceTimeout;
    private final Mono<Void> close;

    /**
     * Releases sent to an instance, until they end: the quorum stops waiting for an instance's answer after the
     * instance timeout, but the release goes on, and {@link #close()} waits for it — closing the instance's
     * connection under it could drop it and leave the owner's key there for its TTL.
     */
    private final Set<CompletableFuture<Boolean>> releasesInFlight = ConcurrentHashMap.newKeySet();

    private RedisQuorumBackend(List<RedisLockBackend> instances, Duration instanceTimeout) {
        this.instances = List.copyOf(instances);
        this.quorum = this.instances.size() / 2 + 1;
        this.instanceTimeout = instanceTimeout;
        this.close = Mono.defer(() -> Mono.when(releasesInFlight.stream()
                                .map(f -> Mono.fromFuture(f, true).onErrorResume(e -> Mono.empty())).toList())
                        .timeout(CLOSE_WAITS_FOR_RELEASES, Mono.empty()))
                .then(Mono.when(this.instances.stream().map(RedisLockBackend::close).toList())).cache();
    }

    /**
     * The owner-checked release on one instance, followed to its end ({@link #releasesInFlight}); the view returned
     * gives up after the instance timeout.
     */
    private Mono<Boolean> releaseOn(RedisLockBackend instance, String name, String owner) {
        return Mono.defer(() -> {
            CompletableFuture<Boolean> sent = instance.release(name, owner).toFuture();
            releasesInFlight.add(sent);
            sent.whenComplete((r, e) -> releasesInFlight.remove(sent));
            return Mono.fromFuture(sent, true).timeout(instanceTimeout);
        });
    }

    /**
     * @param instances one backend per independent master (an odd number, usually 3 or 5)
     * @return a quorum backend with {@link #DEFAULT_INSTANCE_TIMEOUT}
     */
    public static RedisQuorumBackend create(List<RedisLockBackend> instances) {
        return create(instances, DEFAULT_INSTANCE_TIMEOUT);
    }

    /**
     * @param instances       one backend per independent master (an odd number, usually 3 or 5);
     *                        it must not be empty or contain nulls
     * @param instanceTimeout how long one request to one instance may take — small compared with
     *                        the lease time, so a dead instance costs little
     * @return a quorum backend; closing it closes the instances
     */
    public static RedisQuorumBackend create(List<RedisLockBackend> instances, Duration instanceTimeout) {
        Objects.requireNonNull(instances, "instances");
        Objects.requireNonNull(instanceTimeout, "instanceTimeout");
        if (instances.isEmpty()) {
            throw new IllegalArgumentException("instances must not be empty");
        }
        instances.forEach(i -> Objects.requireNonNull(i, "instances[i]"));
        if (instanceTimeout.isZero() || instanceTimeout.isNegative()) {
            throw new IllegalArgumentException("instanceTimeout must be positive, was " + instanceTimeout);
        }
        return new RedisQuorumBackend(instances, instanceTimeout);
    }

    /** @return how many instances must agree: {@code N/2 + 1} */
    public int quorum() {
        return quorum;
    }

    /** @return the instance backends, in the order given */
    public List<RedisLockBackend> instances() {
        return instances;
    }

    @Override
    public String name() {
        return "redis-quorum";
    }

    /**
     * One Redlock round (see the class documentation). Cancelling stops waiting for the answers;
     * requests already sent are not recalled (the engine releases the owner's keys).
     */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return Mono.defer(() -> {
            long start = request.clock().nanoTime();
            return Flux.fromIterable(instances)
                    .flatMap(i -> i.tryGrant(request).timeout(instanceTimeout)
                            .map(a -> new Answer<>(i, a, null))
                            .onErrorResume(e -> Mono.just(new Answer<>(i, null, e))))
                    .collectList()
                    .flatMap(answers -> decide(request, start, answers));
        });
    }

    private Mono<Attempt> decide(GrantRequest request, long start, List<Answer<Attempt>> answers) {
        List<Answer<Attempt>> granted = answers.stream().filter(a -> a.value instanceof Attempt.Granted).toList();
        // Redlock's start time: when the earliest granting instance's script was sent (after any
        // lazy connect), so every granting instance counts its TTL from then or later
        long validFrom = granted.stream().mapToLong(a -> ((Attempt.Granted) a.value).validFromNanos())
                .filter(v -> v != Attempt.SENT_TIME).min().orElse(start);
        if (granted.size() >= quorum && withinValidity(request, validFrom)) {
            long token = granted.stream().mapToLong(a -> ((Attempt.Granted) a.value).token()).max().orElseThrow();
            return Flux.fromIterable(granted)
                    .flatMap(a -> a.instance.ratchet(request.name(), request.owner(), token).timeout(instanceTimeout)
                            .onErrorReturn(false))
                    .filter(ok -> ok)
                    .count()
                    .flatMap(ratcheted -> {
                        if (ratcheted >= quorum && withinValidity(request, validFrom)) {
                            return Mono.just(new Attempt.Granted(token, request.leaseTime(), validFrom));
                        }
                        return releaseEverywhere(request.name(), request.owner())
                                .then(Mono.error(new LockBackendException(request.name(), "quorum grant of lock '"
                                        + request.name() + "' could not fix its fencing token on a majority in time ("
                                        + ratcheted + " of " + instances.size() + ")", null, true)));
                    });
        }
        long errors = answers.stream().filter(a -> a.error != null).count();
        LockBackendException failure = null;
        if (granted.size() >= quorum) {
            failure = new LockBackendException(request.name(), "quorum grant of lock '" + request.name()
                    + "' took longer than its validity (TTL " + request.leaseTime() + " minus drift)", null, true);
        } else if (errors > instances.size() - quorum) {
            Throwable first = answers.stream().filter(a -> a.error != null).findFirst().map(a -> a.error).orElse(null);
            failure = new LockBackendException(request.name(), "no majority of redis instances answered the grant of lock '"
                    + request.name() + "' (" + errors + " of " + instances.size() + " failed)", first, true);
        }
        Holder holder = answers.stream()
                .filter(a -> a.value instanceof Attempt.Busy b && b.holder() != null)
                .map(a -> ((Attempt.Busy) a.value).holder())
                .min(Comparator.comparing(h -> h.remaining() == null ? Duration.ofDays(365) : h.remaining()))
                .orElse(null);
        LockBackendException f = failure;
        return releaseEverywhere(request.name(), request.owner())
                .then(Mono.defer(() -> f != null ? Mono.<Attempt>error(f) : Mono.just(Attempt.busy(holder))));
    }

    private boolean withinValidity(GrantRequest request, long validFrom) {
        long ttl = request.leaseTime().toNanos();
        long elapsed = request.clock().nanoTime() - validFrom;
        return ttl - elapsed - (long) (ttl * DRIFT_FACTOR) - DRIFT_CONSTANT_NANOS > 0;
    }

    private Mono<Void> releaseEverywhere(String name, String owner) {
        return Flux.fromIterable(instances)
                .flatMap(i -> releaseOn(i, name, owner).onErrorResume(e -> Mono.empty()))
                .then();
    }

    /** Renews on every instance; see the class documentation for how answers combine. */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        Objects.requireNonNull(batch, "batch");
        return Mono.defer(() -> Flux.fromIterable(instances)
                .flatMap(i -> i.renew(batch).timeout(instanceTimeout)
                        .map(r -> new Answer<>(i, r, null))
                        .onErrorResume(e -> Mono.just(new Answer<>(i, null, e))))
                .collectList()
                .flatMap(answers -> {
                    List<RenewOutcome> out = new ArrayList<>(batch.size());
                    for (int idx = 0; idx < batch.size(); idx++) {
                        int renewed = 0;
                        int notHeld = 0;
                        for (Answer<List<RenewOutcome>> a : answers) {
                            if (a.value != null) {
                                if (a.value.get(idx).renewed()) {
                                    renewed++;
                                } else {
                                    notHeld++;
                                }
                            }
                        }
                        if (renewed >= quorum) {
                            out.add(RenewOutcome.renewed(batch.get(idx).leaseTime()));
                        } else if (notHeld > instances.size() - quorum) {
                            out.add(RenewOutcome.notHeld());
                        } else {
                            Throwable first = answers.stream().filter(a -> a.error != null).findFirst()
                                    .map(a -> a.error).orElse(null);
                            return Mono.error(new LockBackendException(batch.size() == 1 ? batch.get(0).lock().name() : null,
                                    "no majority of redis instances answered the renewal", first, true));
                        }
                    }
                    return Mono.just(out);
                }));
    }

    /** Owner-checked release on every instance; true when any instance deleted a key of the owner. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> Flux.fromIterable(instances)
                .flatMap(i -> releaseOn(i, name, owner)
                        .map(r -> new Answer<>(i, r, null))
                        .onErrorResume(e -> Mono.just(new Answer<>(i, null, e))))
                .collectList()
                .flatMap(answers -> {
                    if (answers.stream().anyMatch(a -> Boolean.TRUE.equals(a.value))) {
                        return Mono.just(true);
                    }
                    if (answers.stream().allMatch(a -> a.error != null)) {
                        return Mono.error(new LockBackendException(name, "no redis instance answered the release of lock '"
                                + name + "'", answers.get(0).error, true));
                    }
                    return Mono.just(false);
                }));
    }

    /**
     * Replaces the payload on every instance where the grant (owner and token) still stands:
     * {@code true} once a majority wrote it, {@code false} when a majority no longer holds the
     * grant, an error when too few answered. Until every instance has it, {@link #inspect} may
     * report the old or the new payload.
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> Flux.fromIterable(instances)
                .flatMap(i -> i.updatePayload(lock, payload).timeout(instanceTimeout)
                        .map(r -> new Answer<>(i, r, null))
                        .onErrorResume(e -> Mono.just(new Answer<>(i, null, e))))
                .collectList()
                .flatMap(answers -> {
                    long written = answers.stream().filter(a -> Boolean.TRUE.equals(a.value)).count();
                    long notHeld = answers.stream().filter(a -> Boolean.FALSE.equals(a.value)).count();
                    if (written >= quorum) {
                        return Mono.just(true);
                    }
                    if (notHeld > instances.size() - quorum) {
                        return Mono.just(false);
                    }
                    return Mono.error(new LockBackendException(lock.name(), "no majority of redis instances answered the"
                            + " payload update of lock '" + lock.name() + "'", answers.stream().filter(a -> a.error != null)
                            .findFirst().map(a -> a.error).orElse(null), true));
                }));
    }

    /** The holder (owner and token) a majority agrees on; empty when there is none. */
    @Override
    public Mono<Holder> inspect(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> Flux.fromIterable(instances)
                .flatMap(i -> i.inspect(name).timeout(instanceTimeout)
                        .map(h -> new Answer<>(i, h, null))
                        .defaultIfEmpty(new Answer<>(i, null, null))
                        .onErrorResume(e -> Mono.just(new Answer<>(i, null, e))))
                .collectList()
                .flatMap(answers -> {
                    long errors = answers.stream().filter(a -> a.error != null).count();
                    // a grant counts once a majority carries the same owner AND token: before the
                    // ratchet, the instances' own tokens differ and the grant is not final yet
                    Map<String, List<Holder>> byGrant = new HashMap<>();
                    for (Answer<Holder> a : answers) {
                        if (a.value != null) {
                            byGrant.computeIfAbsent(a.value.token() + ":" + a.value.owner(), o -> new ArrayList<>()).add(a.value);
                        }
                    }
                    for (List<Holder> hs : byGrant.values()) {
                        if (hs.size() >= quorum) {
                            // held while a majority holds: the quorum-th longest remaining TTL
                            List<Holder> sorted = new ArrayList<>(hs);
                            sorted.sort(Comparator.comparing((Holder h) -> h.remaining() == null
                                    ? Duration.ofDays(365) : h.remaining()).reversed());
                            return Mono.just(sorted.get(quorum - 1));
                        }
                    }
                    if (errors > instances.size() - quorum) {
                        return Mono.error(new LockBackendException(name, "no majority of redis instances answered the"
                                + " inspection of lock '" + name + "'", answers.stream().filter(a -> a.error != null)
                                .findFirst().map(a -> a.error).orElse(null), true));
                    }
                    return Mono.<Holder>empty();
                }));
    }

    /**
     * All instances' events merged: one {@code Subscribed} once a majority is subscribed (each
     * instance counted once), then every {@code Acquired} (with token 0: an instance's grant
     * precedes the quorum token; the ratchet publishes again once the token is final) and
     * {@code Released}, and a {@code Subscribed} again whenever an instance's subscription is
     * live again after a reconnect (so waiters re-check). Errors when a majority's subscriptions
     * failed.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        Objects.requireNonNull(name, "name");
        return Flux.defer(() -> {
            AtomicInteger subscribed = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            java.util.concurrent.atomic.AtomicIntegerArray seen = new java.util.concurrent.atomic.AtomicIntegerArray(instances.size());
            List<Flux<LockEvent>> all = new ArrayList<>();
            for (int n = 0; n < instances.size(); n++) {
                int index = n;
                all.add(instances.get(n).events(name)
                        .filter(e -> !(e instanceof LockEvent.Subscribed) || seen.getAndSet(index, 1) == 0
                                || subscribed.get() >= quorum) // a first Subscribed counts; later ones are re-checks
                        .onErrorResume(e -> failed.incrementAndGet() > instances.size() - quorum
                                ? Flux.error(e) : Flux.empty()));
            }
            return Flux.merge(all).handle((e, sink) -> {
                if (e instanceof LockEvent.Subscribed) {
                    if (subscribed.get() >= quorum || subscribed.incrementAndGet() == quorum) {
                        sink.next(e);
                    }
                } else if (e instanceof LockEvent.Acquired a) {
                    sink.next(new LockEvent.Acquired(name, a.owner(), 0));
                } else {
                    sink.next(e);
                }
            });
        });
    }

    /**
     * Closes every instance backend, once the releases still in flight on them ended (at most
     * 5 s). Idempotent.
     */
    @Override
    public Mono<Void> close() {
        return close;
    }

    @Override
    public String toString() {
        return "RedisQuorumBackend{" + instances.size() + " instances, quorum " + quorum + "}";
    }

    /** One instance's answer: a value, or an error, or neither (empty). */
    private record Answer<T>(RedisLockBackend instance, T value, Throwable error) {
    }
}
