/**
 * The backend SPI: the only thing a store adapter implements ({@link io.reactivelocks.spi.LockBackend})
 * and its small records. The engine in {@code io.reactivelocks.internal} does the rest — waiting,
 * renewal, loss detection, cancellation, reentrancy and observation — once for every store.
 * The mechanics every store shares live here too: the name rules and shared name encodings
 * ({@link io.reactivelocks.spi.LockNames}), the mapping of a client's errors to the exception
 * family ({@link io.reactivelocks.spi.BackendErrors}) and the backoff steps
 * ({@link io.reactivelocks.spi.Backoff}).
 */
package io.reactivelocks.spi;
