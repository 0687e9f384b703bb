package io.reactivelocks.safety;

/** The short mode of the safety harness on PostgreSQL: every fault kind, one cycle each. */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.B) // two fault-injection runs at a time, whatever else runs
class PostgresSafetyShortModeTest extends SafetyShortModeContract {
    PostgresSafetyShortModeTest() {
        super(SafetyBackend.POSTGRESQL);
    }
}
