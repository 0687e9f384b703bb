/**
 * Spring Framework support (no Spring Boot needed): {@link io.reactivelocks.spring.Locked} runs a
 * reactive bean method under a distributed lock, {@link io.reactivelocks.spring.ScheduledLock} makes a
 * {@code @Scheduled} method run on one instance at a time (and at most once per window),
 * {@link io.reactivelocks.spring.LockedContext} hands the held lease to the method's publisher, and
 * {@link io.reactivelocks.spring.EnableReactiveLocking} switches it all on. Built on Spring AOP (an
 * advisor and a method interceptor, proxied by Spring's infrastructure auto-proxy creator) and on
 * {@link io.reactivelocks.LockClient#withLock LockClient.withLock}.
 */
@NullMarked
package io.reactivelocks.spring;

import org.jspecify.annotations.NullMarked;
