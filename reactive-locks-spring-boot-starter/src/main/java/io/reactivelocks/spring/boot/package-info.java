/**
 * Spring Boot auto-configuration for reactive-locks: a {@link io.reactivelocks.LockClient} bean built from the
 * application's Lettuce {@code RedisClient} or R2DBC {@code ConnectionFactory} bean, configured by
 * {@code reactive-locks.*} properties ({@link io.reactivelocks.spring.boot.ReactiveLocksProperties}), reporting to
 * Micrometer when a {@code MeterRegistry} and {@code reactive-locks-micrometer} are present, and closed with the
 * application context. Entry point: {@link io.reactivelocks.spring.boot.ReactiveLocksAutoConfiguration}.
 */
package io.reactivelocks.spring.boot;
