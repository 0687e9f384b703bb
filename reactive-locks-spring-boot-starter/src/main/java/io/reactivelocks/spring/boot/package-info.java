/**
 * Spring Boot auto-configuration for reactive-locks: a {@link io.reactivelocks.LockClient} bean (and the window lock,
 * semaphore, task queue, election and multi-lock beans a store offers) built from the application's Lettuce
 * {@code RedisClient}, R2DBC {@code ConnectionFactory}, jetcd {@code Client} or Curator {@code CuratorFramework} bean
 * (etcd and ZooKeeper clients also from properties), configured by {@code reactive-locks.*} properties
 * ({@link io.reactivelocks.spring.boot.ReactiveLocksProperties}), reporting to Micrometer meters and observations when
 * a {@code MeterRegistry} / {@code ObservationRegistry} and {@code reactive-locks-micrometer} are present, with a health
 * indicator and the {@code reactivelocks} actuator endpoint ({@link io.reactivelocks.spring.boot.ReactiveLocksEndpoint})
 * when the actuator is, and closed with the application context. Entry point:
 * {@link io.reactivelocks.spring.boot.ReactiveLocksAutoConfiguration}.
 */
@NullMarked
package io.reactivelocks.spring.boot;

import org.jspecify.annotations.NullMarked;
