/**
 * Testcontainers for the stores reactive-locks runs on: {@link io.reactivelocks.testcontainers.RedisLockContainer},
 * {@link io.reactivelocks.testcontainers.PostgresLockContainer}, {@link io.reactivelocks.testcontainers.MariaDbLockContainer}, {@link io.reactivelocks.testcontainers.EtcdLockContainer}
 * and {@link io.reactivelocks.testcontainers.ZooKeeperLockContainer}. Each starts the store's official image (or
 * any image declared a compatible substitute for it), and hands out the store's own client and ready
 * {@link io.reactivelocks.LockClient}s, which it closes when the container stops. They are ordinary
 * Testcontainers containers: use them with {@code @Testcontainers}/{@code @Container} in JUnit 5, or
 * start and stop them yourself (they are {@link java.lang.AutoCloseable}).
 *
 * <p>Each container needs its store module on the class path ({@code reactive-locks-redis},
 * {@code reactive-locks-r2dbc} with {@code org.testcontainers:testcontainers-postgresql} or {@code org.mariadb:r2dbc-mariadb},
 * {@code reactive-locks-etcd}, {@code reactive-locks-zookeeper}): this module declares them optional.
 */
@NullMarked
package io.reactivelocks.testcontainers;

import org.jspecify.annotations.NullMarked;
