package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClientMetrics;
import java.util.List;

/** The live view of one {@link DefaultLockClient}: reads its registries of leases and acquires in progress. */
final class ClientMetrics implements LockClientMetrics {

    private final Registry<LeaseHandle> leases;
    private final Registry<AcquireOperation> operations;
    private final java.util.concurrent.atomic.LongAdder unconfirmedReleases = new java.util.concurrent.atomic.LongAdder();

    ClientMetrics(Registry<LeaseHandle> leases, Registry<AcquireOperation> operations) {
        this.leases = leases;
        this.operations = operations;
    }

    @Override
    public List<Lease> heldLeases() {
        return leases.snapshot().stream().<Lease>map(LeaseHandle::snapshot).toList();
    }

    @Override
    public int heldLeaseCount() {
        return leases.size();
    }

    @Override
    public List<String> pendingAcquires() {
        return operations.snapshot().stream().map(AcquireOperation::name).toList();
    }

    @Override
    public int pendingAcquireCount() {
        return operations.size();
    }

    @Override
    public long unconfirmedReleaseCount() {
        return unconfirmedReleases.sum();
    }

    void releaseUnconfirmed() {
        unconfirmedReleases.increment();
    }

    @Override
    public String toString() {
        return "LockClientMetrics{held " + leases.size() + ", pending " + operations.size() + "}";
    }
}
