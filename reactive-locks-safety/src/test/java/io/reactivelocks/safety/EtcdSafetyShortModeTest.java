package io.reactivelocks.safety;

/** The short mode of the safety harness on etcd: every fault kind, one cycle each. */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.A) // two fault-injection runs at a time, whatever else runs
class EtcdSafetyShortModeTest extends SafetyShortModeContract {
    EtcdSafetyShortModeTest() {
        super(SafetyBackend.ETCD);
    }
}
