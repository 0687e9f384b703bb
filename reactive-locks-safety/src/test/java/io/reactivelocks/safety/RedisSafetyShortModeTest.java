package io.reactivelocks.safety;

/** The short mode of the safety harness on Redis: every fault kind, one cycle each. */
class RedisSafetyShortModeTest extends SafetyShortModeContract {
    RedisSafetyShortModeTest() {
        super(SafetyBackend.REDIS);
    }
}
