/**
 * What a store implements for {@link io.reactivelocks.rwlock.ReadWriteLock}: grant reads while no
 * writer holds (and, writer-preferring, no writer waits), grant a write while no one holds (else
 * record the waiting writer's expiring intent), renew and release grants owner-checked, list the
 * holders and publish releases. The engine ({@code io.reactivelocks.internal.rwlock}) does the rest.
 */
@NullMarked
package io.reactivelocks.spi.rwlock;

import org.jspecify.annotations.NullMarked;
