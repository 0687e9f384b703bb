package io.reactivelocks.spi;

/** How a backend keeps held locks alive. */
public enum RenewalMode {
    /** The engine renews each lease, batching leases due in the same tick into one {@link LockBackend#renew} call. */
    PER_LEASE,
    /** One store-side session keeps every lock of the client alive; see {@link LockBackend#sessionRenewals}. */
    SESSION
}
