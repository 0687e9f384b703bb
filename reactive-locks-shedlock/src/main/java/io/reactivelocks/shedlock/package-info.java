/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} backed by a reactive-locks
 * {@link io.reactivelocks.LockClient}: {@link io.reactivelocks.shedlock.ReactiveLocksLockProvider}.
 * Existing {@code @SchedulerLock} tasks gain every reactive-locks store, renewed leases and
 * fencing tokens without a rewrite.
 */
@NullMarked
package io.reactivelocks.shedlock;

import org.jspecify.annotations.NullMarked;
