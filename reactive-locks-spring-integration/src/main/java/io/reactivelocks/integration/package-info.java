/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} backed by
 * a reactive-locks {@link io.reactivelocks.LockClient}:
 * {@link io.reactivelocks.integration.ReactiveLocksLockRegistry} and its
 * {@link io.reactivelocks.integration.ReactiveLocksLock}s, with fencing tokens and loss signals.
 */
@NullMarked
package io.reactivelocks.integration;

import org.jspecify.annotations.NullMarked;
