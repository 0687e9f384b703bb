/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} backed by
 * a reactive-locks {@link io.reactivelocks.LockClient}:
 * {@link io.reactivelocks.spring.integration.ReactiveLocksLockRegistry} and its
 * {@link io.reactivelocks.spring.integration.ReactiveLocksLock}s, with fencing tokens and loss signals.
 */
@NullMarked
package io.reactivelocks.spring.integration;

import org.jspecify.annotations.NullMarked;
