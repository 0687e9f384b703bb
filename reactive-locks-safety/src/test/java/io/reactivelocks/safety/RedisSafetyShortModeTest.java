package io.reactivelocks.safety;

/** The short mode of the safety harness on Redis: every fault kind, one cycle each. */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.B) // two fault-injection runs at a time, whatever else runs
class RedisSafetyShortModeTest extends SafetyShortModeContract {
    RedisSafetyShortModeTest() {
        super(SafetyBackend.REDIS);
    }
}
