/**
 * Lock clients on the ZooKeeper of a Vert.x cluster: {@link io.reactivelocks.vertx.zookeeper.VertxZooKeeperLocks}
 * builds the ZooKeeper lock, semaphore and window lock on the Curator client of Vert.x's
 * {@code ZookeeperClusterManager}. Needs the optional dependencies {@code io.vertx:vertx-zookeeper}
 * and {@code io.reactivelocks:reactive-locks-zookeeper}.
 */
@NullMarked
package io.reactivelocks.vertx.zookeeper;

import org.jspecify.annotations.NullMarked;
