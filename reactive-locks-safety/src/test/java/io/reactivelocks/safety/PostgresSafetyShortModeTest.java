package io.reactivelocks.safety;

/** The short mode of the safety harness on PostgreSQL: every fault kind, one cycle each. */
@org.junit.jupiter.api.extension.ExtendWith(SafetyLanes.class) // at most two short-mode classes at a time
@org.junit.jupiter.api.Order(5) // handed out fifth of the short-mode classes (longest first)
class PostgresSafetyShortModeTest extends SafetyShortModeContract {
    PostgresSafetyShortModeTest() {
        super(SafetyBackend.POSTGRESQL);
    }
}
