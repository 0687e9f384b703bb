/**
 * Micrometer meters and observations for reactive-locks, fed by the engine's observer hook
 * ({@link io.reactivelocks.LockListener}): pass a {@link io.reactivelocks.micrometer.MicrometerLockListener}
 * (meters) and/or an {@link io.reactivelocks.micrometer.ObservationLockListener} (observations: spans of waits,
 * holds and renewals, children of the caller's) to {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend,
 * io.reactivelocks.LockOptions, io.reactivelocks.LockListener)}, combined with
 * {@link io.reactivelocks.LockListener#composite} when both.
 */
@NullMarked
package io.reactivelocks.micrometer;

import org.jspecify.annotations.NullMarked;
