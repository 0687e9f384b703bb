package io.reactivelocks.safety;

/** The short mode of the safety harness on ZooKeeper: every fault kind, one cycle each. */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.B) // two fault-injection runs at a time, whatever else runs
class ZooKeeperSafetyShortModeTest extends SafetyShortModeContract {
    ZooKeeperSafetyShortModeTest() {
        super(SafetyBackend.ZOOKEEPER);
    }
}
