/**
 * What a store implements for {@link io.reactivelocks.semaphore.Semaphore}: grant permits while
 * fewer than N unexpired holders exist, renew and release them owner-checked, list the holders and
 * publish releases. The engine ({@code io.reactivelocks.internal.semaphore}) does the rest.
 */
@NullMarked
package io.reactivelocks.spi.semaphore;

import org.jspecify.annotations.NullMarked;
