/**
 * The Redis backend, on Lettuce's reactive API: {@link io.reactivelocks.redis.RedisLocks} (entry
 * point: a store session handing out every concept over one command and one pub/sub connection), {@link io.reactivelocks.redis.RedisLockBackend} (one server, fenced leases, pub/sub
 * wake-ups, cluster-safe keys), {@link io.reactivelocks.redis.RedisQuorumBackend} (Redlock over N
 * independent masters with monotonic fencing tokens), window locks and fenced values (the core
 * {@code WindowLock} and {@code FencedValues}, through the session's {@code windowLocks} and
 * {@code fencedValues}) and the task-queue store behind the session's {@code taskQueue} (one script per capture, server-clock expiry,
 * {@code TIME}-floored tokens, pub/sub wake-ups; the API is core's {@link io.reactivelocks.task.TaskQueue}),
 * and {@link io.reactivelocks.redis.RedisFencedWrites} (fenced writes on the application's own keys, over its connection).
 * Lua scripts live next to the classes as resources, one file each. Everything else in this
 * package is package-private.
 */
@NullMarked
package io.reactivelocks.redis;

import org.jspecify.annotations.NullMarked;
