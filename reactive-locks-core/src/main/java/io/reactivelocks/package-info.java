/**
 * The public API of reactive-locks: {@link io.reactivelocks.LockClient}, {@link io.reactivelocks.Lease},
 * {@link io.reactivelocks.LockOptions}, {@link io.reactivelocks.LockState} and the
 * {@link io.reactivelocks.LockException} family. Every operation returns a {@code Mono} or
 * {@code Flux}, does nothing before subscribe and never blocks.
 */
@NullMarked
package io.reactivelocks;

import org.jspecify.annotations.NullMarked;
