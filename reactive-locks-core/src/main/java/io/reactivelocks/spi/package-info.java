/**
 * The backend SPI: the only thing a store adapter implements ({@link io.reactivelocks.spi.LockBackend})
 * and its small records. The engine in {@code io.reactivelocks.internal} does the rest — waiting,
 * renewal, loss detection, cancellation, reentrancy and observation — once for every store.
 * The mechanics every store shares live here too: the mapping of a client's errors to the
 * exception family ({@link io.reactivelocks.spi.BackendErrors}), fresh owner ids
 * ({@link io.reactivelocks.spi.GrantRequest#newOwner()}) and a fair waiting line
 * ({@link io.reactivelocks.spi.WaiterLine}); the name rules and name encodings are API
 * ({@link io.reactivelocks.LockNames}).
 *
 * <p>Layering: this package and its sub-packages never import {@code io.reactivelocks.internal}
 * (checked by {@code ArchitectureTest}).
 */
@NullMarked
package io.reactivelocks.spi;

import org.jspecify.annotations.NullMarked;
