package io.reactivelocks.semaphore;

import java.util.List;
import java.util.Objects;

/**
 * What {@link Semaphore#observe} reports: the unexpired holders of a semaphore's permits.
 *
 * @param name    the semaphore name
 * @param holders the holders, in token order
 */
public record SemaphoreState(String name, List<PermitHolder> holders) {

    /** Checks and copies the fields. */
    public SemaphoreState {
        Objects.requireNonNull(name, "name");
        holders = List.copyOf(Objects.requireNonNull(holders, "holders"));
    }

    /** @return how many permits are in use */
    public int inUse() {
        return holders.size();
    }

    /**
     * One held permit.
     *
     * @param owner           the permit's owner id
     * @param token           its fencing token
     * @param validUntilNanos when, on the observing side's monotonic clock, it expires unless renewed
     *                        (an estimate from the store's remaining TTL)
     */
    public record PermitHolder(String owner, long token, long validUntilNanos) {
        /** Checks the fields. */
        public PermitHolder {
            Objects.requireNonNull(owner, "owner");
        }
    }
}
