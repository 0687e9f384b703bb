package io.reactivelocks.cli;

/** The CLI's exit codes besides a child command's own. */
final class ExitCodes {

    /** Done. */
    static final int OK = 0;
    /** An unexpected failure (the message says which). */
    static final int FAILED = 1;
    /** Bad input: an unknown option or scheme, a malformed URL or duration, a missing argument. */
    static final int BAD_INPUT = 2;
    /** The lock (or a permit) was not acquired within {@code --wait}. */
    static final int NOT_ACQUIRED = 3;
    /** The lease was lost while the command ran; the command was stopped. */
    static final int LEASE_LOST = 4;
    /** The store did not answer (down, unreachable) or failed. */
    static final int STORE_UNAVAILABLE = 5;
    /** An operator asked the holder to let go ({@code revoke}); the command was stopped and the lease released. */
    static final int REVOKED = 6;

    private ExitCodes() {
    }
}
