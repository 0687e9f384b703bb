/**
 * The Redis backend, on Lettuce's reactive API: {@link io.reactivelocks.redis.RedisLocks} (entry
 * point), {@link io.reactivelocks.redis.RedisLockBackend} (one server, fenced leases, pub/sub
 * wake-ups, cluster-safe keys), {@link io.reactivelocks.redis.RedisQuorumBackend} (Redlock over N
 * independent masters with monotonic fencing tokens), window locks and fenced values (the core
 * {@code WindowLock} and {@code FencedValues}, through {@code RedisLocks.windowLock} and
 * {@code RedisLocks.fencedValues}) and {@link io.reactivelocks.redis.RedisTaskQueue} (task
 * capture: fenced, expiring claims on queued tasks, captured by demand, with no sweeper process).
 * Lua scripts live next to the classes as resources, one file each. Everything else in this
 * package is package-private.
 */
package io.reactivelocks.redis;
