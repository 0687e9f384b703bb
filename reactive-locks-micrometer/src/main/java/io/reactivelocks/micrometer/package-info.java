/**
 * Micrometer meters for reactive-locks, fed by the engine's observer hook
 * ({@link io.reactivelocks.LockListener}): pass a {@link io.reactivelocks.micrometer.MicrometerLockListener}
 * to {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, io.reactivelocks.LockOptions,
 * io.reactivelocks.LockListener)}.
 */
package io.reactivelocks.micrometer;
