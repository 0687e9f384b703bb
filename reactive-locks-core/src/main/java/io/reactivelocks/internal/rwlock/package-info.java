/**
 * The read-write lock engine: the one implementation of {@link io.reactivelocks.rwlock.ReadWriteLock}
 * over a {@link io.reactivelocks.spi.rwlock.ReadWriteStore}, on the shared grant engine
 * ({@code io.reactivelocks.internal.GrantEngine}). Not API.
 */
@NullMarked
package io.reactivelocks.internal.rwlock;

import org.jspecify.annotations.NullMarked;
