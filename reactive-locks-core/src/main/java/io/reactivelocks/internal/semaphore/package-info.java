/**
 * The semaphore engine: the one implementation of {@link io.reactivelocks.semaphore.Semaphore}
 * over a {@link io.reactivelocks.spi.semaphore.SemaphoreStore} (waiting, renewal, loss, cancel
 * clean-up, observation). Not API.
 */
@NullMarked
package io.reactivelocks.internal.semaphore;

import org.jspecify.annotations.NullMarked;
