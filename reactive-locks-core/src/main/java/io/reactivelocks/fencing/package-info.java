/**
 * Fenced writes: the one rule ({@link io.reactivelocks.fencing.Fencing#admits}) by which a
 * protected resource accepts or refuses a writer's fencing token, and
 * {@link io.reactivelocks.fencing.FencedValues}, a key/value resource that applies it atomically
 * (in memory: {@link io.reactivelocks.local.LocalFencedValues}; Redis and PostgreSQL through their
 * entry points). The helpers that fence the application's own data (an SQL row, a Redis key) signal a
 * refused write as {@link io.reactivelocks.fencing.StaleTokenException}.
 */
@NullMarked
package io.reactivelocks.fencing;

import org.jspecify.annotations.NullMarked;
