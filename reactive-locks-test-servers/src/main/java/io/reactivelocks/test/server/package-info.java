/**
 * Real-server fixtures: {@link io.reactivelocks.test.server.RedisServer},
 * {@link io.reactivelocks.test.server.PostgresServer}, {@link io.reactivelocks.test.server.EtcdServer}
 * and {@link io.reactivelocks.test.server.ZooKeeperServer} start a real server on a free loopback
 * port in a fresh temp dir, as a child process ({@link io.reactivelocks.test.server.ServerProcess})
 * that a test can pause, kill and restart.
 *
 * <p>Each kind resolves its server through a chain (see {@link io.reactivelocks.test.server.FixtureMode}):
 * an environment variable naming a running server, the local binary from the Debian package, an
 * embedded server from Maven where one exists, a container (Testcontainers) when a Docker API answers, or
 * else a {@link io.reactivelocks.test.server.ServerUnavailableException} that says what to install.
 * Everything here blocks the calling thread (bounded): call it from test threads, never from a
 * Reactor non-blocking thread.
 */
@NullMarked
package io.reactivelocks.test.server;

import org.jspecify.annotations.NullMarked;
