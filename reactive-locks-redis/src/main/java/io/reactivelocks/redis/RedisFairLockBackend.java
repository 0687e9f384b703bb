package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.FairLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.WaiterLine;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A queueing {@link LockBackend} on Redis: a fair (FIFO) lock ({@link FairLockBackend} over the mutex). The held lock is the mutex's
 * ({@link RedisLockBackend}: same lock and fence keys, renewal, inspect, payload and events);
 * waiting owners queue in a per-name sorted set by arrival, each with a deadline (by the
 * server's {@code TIME}) that its waiting client refreshes, so that an abandoned waiter expires
 * instead of blocking the queue. One script ({@code fair-acquire.lua}) drops expired waiters,
 * enqueues or refreshes the caller, and grants the head of the queue when the lock key is free.
 *
 * <p>A waiting request answers {@link Attempt.Queued}; its turn listens to the lock's pub/sub
 * channel and asks again on a release, when the holder's TTL or the head waiter's deadline
 * passes, and at least every half of the waiter deadline (to refresh its own). A try
 * ({@code queue = false}) never joins the queue and is busy while anyone waits. A release
 * removes the owner's hold or queue entry and publishes it, so that a cancelled waiter leaves
 * the queue at once.
 */
final class RedisFairLockBackend extends FairLockBackend {

    private final RedisLockBackend mutex;
    private final boolean owned;

    /**
     * @param mutex the backend whose connections, keys and held-lock scripts this one uses
     * @param owned whether {@link #close()} closes {@code mutex}
     */
    RedisFairLockBackend(RedisLockBackend mutex, boolean owned) {
        super(mutex, mutex::events, Schedulers.parallel());
        this.mutex = mutex;
        this.owned = owned;
    }

    @Override
    public String name() {
        return "redis";
    }

    /**
     * @param leaseTime a request's lease time
     * @return how long a waiter's entry lives without another call: twice the lease time, at
     *         least one second (well above a round trip; refreshed every half of it)
     */
    static Duration waiterDeadline(Duration leaseTime) {
        return WaiterLine.waiterDeadline(leaseTime);
    }

    /** The answer of one script call: an attempt, or {@link WaiterLine.StillQueued} with its hint. */
    @Override
    protected Mono<Object> ask(GrantRequest request) {
        return Mono.defer(() -> {
            String name = request.name();
            RedisKeys keys = mutex.keys();
            String[] k = {keys.lock(name), keys.fence(name), keys.fairQueue(name), keys.fairDeadlines(name)};
            String[] a = {request.owner(), RedisLockBackend.millis(request.leaseTime()), mutex.fenceTtlMs(),
                    keys.channel(name), request.payload() == null ? "0" : "1",
                    request.payload() == null ? "" : request.payload(), request.queue() ? "1" : "0",
                    RedisLockBackend.millis(waiterDeadline(request.leaseTime()))};
            return mutex.commands()
                    .flatMap(c -> {
                        long sentAt = request.clock().nanoTime();
                        return LuaScript.FAIR_ACQUIRE.run(c, ScriptOutputType.MULTI, k, a).next()
                                .map(reply -> toAnswer((List<?>) reply, request.leaseTime(), sentAt));
                    })
                    .onErrorMap(e -> RedisErrors.map(name, "acquire", e));
        });
    }

    /** Owner-checked release of the hold or the queue entry of {@code owner}; publishes it. */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> {
            RedisKeys keys = mutex.keys();
            return mutex.script(LuaScript.FAIR_RELEASE, ScriptOutputType.INTEGER,
                            new String[] {keys.lock(name), keys.fairQueue(name), keys.fairDeadlines(name)},
                            owner, keys.channel(name))
                    .map(r -> Long.valueOf(1L).equals(r))
                    .onErrorMap(e -> RedisErrors.map(name, "release", e));
        });
    }






    /** Closes the underlying backend when this one owns it. Idempotent. */
    @Override
    public Mono<Void> close() {
        return owned ? mutex.close() : Mono.empty();
    }

    private static Object toAnswer(List<?> reply, Duration leaseTime, long sentAt) {
        long kind = ((Number) reply.get(0)).longValue();
        if (kind == 1L) {
            return new Attempt.Granted(Long.parseLong(String.valueOf(reply.get(1))), leaseTime, sentAt);
        }
        if (kind == 2L) {
            return new WaiterLine.StillQueued(((Number) reply.get(1)).longValue(),
                    reply.size() > 2 ? ((Number) reply.get(2)).longValue() : -1);
        }
        long pttl = ((Number) reply.get(2)).longValue();
        if (pttl == -2L) {
            return Attempt.busy(null); // free, but waiters are queued
        }
        return Attempt.busy(new Holder(String.valueOf(reply.get(3)), Long.parseLong(String.valueOf(reply.get(1))),
                pttl >= 0 ? Duration.ofMillis(pttl) : null,
                Long.valueOf(1L).equals(reply.get(4)) ? String.valueOf(reply.get(5)) : null));
    }


    @Override
    public String toString() {
        return "RedisFairLockBackend{" + mutex.options() + "}";
    }
}
