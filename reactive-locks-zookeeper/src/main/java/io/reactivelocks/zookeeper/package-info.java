/**
 * The ZooKeeper backend: {@link io.reactivelocks.zookeeper.ZooKeeperLocks} connects a store session
 * (every concept over one ZooKeeper session) through Apache Curator's asynchronous API; {@link io.reactivelocks.zookeeper.ZooKeeperLockBackend}
 * documents the recipe (protected ephemeral-sequential nodes, the lowest sequence owns the lock,
 * each waiter watches only its predecessor, the owner node's czxid is the fencing token, the
 * ZooKeeper session is the lease, the lock payload in the owner node's data); leader election runs
 * on the session's lock client ({@code elections}). Root, ACL and timing settings are in
 * {@link io.reactivelocks.zookeeper.ZooKeeperLockOptions}.
 *
 * <p>Window locks (the core {@code WindowLock}, from the session's {@code windowLocks}) are one
 * versioned write per claim, the window taken from the write's server-stamped {@code mtime}.
 * Fenced values ({@link io.reactivelocks.zookeeper.ZooKeeperFencedValues}) are one persistent node
 * per key under {@code <root>/fenced}, written at the version read.
 */
@NullMarked
package io.reactivelocks.zookeeper;

import org.jspecify.annotations.NullMarked;
