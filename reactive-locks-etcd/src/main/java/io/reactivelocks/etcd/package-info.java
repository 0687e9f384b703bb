/**
 * The etcd backend: {@link io.reactivelocks.etcd.EtcdLocks} connects a store session on etcd v3
 * through jetcd; {@link io.reactivelocks.etcd.EtcdLockBackend} documents the recipe (Go's
 * {@code concurrency.Mutex} on KV + Watch, one session lease per backend, create revisions as
 * fencing tokens, each waiter watching only its predecessor, the lock payload in the owner's
 * key); leader election runs on these clients through {@link io.reactivelocks.election.LeaderElection}.
 * Connection, authentication and TLS settings are in {@link io.reactivelocks.etcd.EtcdConnectionOptions}.
 *
 * <p>Window locks (the core {@code WindowLock}, from the session's {@code windowLocks}) are one
 * conditional put per claim; the window index comes from the client's clock, since etcd has none
 * a transaction can read. Fenced values ({@link io.reactivelocks.etcd.EtcdFencedValues}) are one key
 * per key, written by a compare-and-set transaction on its mod revision.
 */
@NullMarked
package io.reactivelocks.etcd;

import org.jspecify.annotations.NullMarked;
