package io.reactivelocks.safety;

/** The short mode of the safety harness on Redis: every fault kind, one cycle each. */
@org.junit.jupiter.api.extension.ExtendWith(SafetyLanes.class) // at most two short-mode classes at a time
@org.junit.jupiter.api.Order(6) // handed out sixth of the short-mode classes (longest first)
class RedisSafetyShortModeTest extends SafetyShortModeContract {
    RedisSafetyShortModeTest() {
        super(SafetyBackend.REDIS);
    }
}
