package io.reactivelocks.safety;

/** The short mode of the safety harness on ZooKeeper: every fault kind, one cycle each. */
class ZooKeeperSafetyShortModeTest extends SafetyShortModeContract {
    ZooKeeperSafetyShortModeTest() {
        super(SafetyBackend.ZOOKEEPER);
    }
}
