/**
 * The distributed read-write lock: many readers or one writer per name, each grant a
 * {@link io.reactivelocks.Lease} (renewed, fenced, released on cancel, expiring when its holder
 * dies). {@link io.reactivelocks.rwlock.ReadWriteLock} is the API,
 * {@link io.reactivelocks.rwlock.ReadWriteLockOptions} its options (timing and the writer- or
 * reader-preferring policy), {@link io.reactivelocks.rwlock.ReadWriteState} what observers see.
 * Stores implement {@link io.reactivelocks.spi.rwlock.ReadWriteStore}.
 */
@NullMarked
package io.reactivelocks.rwlock;

import org.jspecify.annotations.NullMarked;
