package io.reactivelocks.safety;

/** The short mode of the safety harness on etcd: every fault kind, one cycle each. */
@org.junit.jupiter.api.extension.ExtendWith(SafetyLanes.class) // at most two short-mode classes at a time
@org.junit.jupiter.api.Order(2) // handed out second of the short-mode classes (longest first)
class EtcdSafetyShortModeTest extends SafetyShortModeContract {
    EtcdSafetyShortModeTest() {
        super(SafetyBackend.ETCD);
    }
}
