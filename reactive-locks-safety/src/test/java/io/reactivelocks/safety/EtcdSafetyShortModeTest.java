package io.reactivelocks.safety;

/** The short mode of the safety harness on etcd: every fault kind, one cycle each. */
class EtcdSafetyShortModeTest extends SafetyShortModeContract {
    EtcdSafetyShortModeTest() {
        super(SafetyBackend.ETCD);
    }
}
