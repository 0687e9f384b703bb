/**
 * The distributed semaphore: at most N holders of a name's permits at once, each permit a
 * {@link io.reactivelocks.Lease} (renewed, fenced, released on cancel, expiring when its holder
 * dies). {@link io.reactivelocks.semaphore.Semaphore} is the API,
 * {@link io.reactivelocks.semaphore.SemaphoreState} what observers see. Stores implement
 * {@link io.reactivelocks.spi.semaphore.SemaphoreStore}.
 */
@NullMarked
package io.reactivelocks.semaphore;

import org.jspecify.annotations.NullMarked;
