/**
 * The backend SPI: the only thing a store adapter implements ({@link io.reactivelocks.spi.LockBackend})
 * and its small records. The engine in {@code io.reactivelocks.internal} does the rest — waiting,
 * renewal, loss detection, cancellation, reentrancy and observation — once for every store.
 */
package io.reactivelocks.spi;
