package io.reactivelocks.safety;

/** The short mode of the safety harness on ZooKeeper: every fault kind, one cycle each. */
@org.junit.jupiter.api.extension.ExtendWith(SafetyLanes.class) // at most two short-mode classes at a time
@org.junit.jupiter.api.Order(3) // handed out third of the short-mode classes (longest first)
class ZooKeeperSafetyShortModeTest extends SafetyShortModeContract {
    ZooKeeperSafetyShortModeTest() {
        super(SafetyBackend.ZOOKEEPER);
    }
}
