package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClientMetrics;
import java.util.List;
import java.util.Set;

/** The live view of one {@link DefaultLockClient}: reads its sets of leases and acquires in progress. */
final class ClientMetrics implements LockClientMetrics {

    private final Set<LeaseHandle> leases;
    private final Set<AcquireOperation> operations;

    ClientMetrics(Set<LeaseHandle> leases, Set<AcquireOperation> operations) {
        this.leases = leases;
        this.operations = operations;
    }

    @Override
    public List<Lease> heldLeases() {
        return leases.stream().<Lease>map(LeaseHandle::snapshot).toList();
    }

    @Override
    public int heldLeaseCount() {
        return leases.size();
    }

    @Override
    public List<String> pendingAcquires() {
        return operations.stream().map(AcquireOperation::name).toList();
    }

    @Override
    public int pendingAcquireCount() {
        return operations.size();
    }

    @Override
    public String toString() {
        return "LockClientMetrics{held " + leases.size() + ", pending " + operations.size() + "}";
    }
}
