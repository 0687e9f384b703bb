package io.reactivelocks.safety;

/** The short mode of the safety harness on PostgreSQL: every fault kind, one cycle each. */
class PostgresSafetyShortModeTest extends SafetyShortModeContract {
    PostgresSafetyShortModeTest() {
        super(SafetyBackend.POSTGRESQL);
    }
}
