package io.reactivelocks.benchmarks.load;

/** What a contender is in a comparison: the floor, this project, or a competitor. */
enum Role {
    /** The raw driver issuing exactly the commands our lock issues: what no lock client can beat. */
    FLOOR,
    /** reactive-locks. */
    OURS,
    /** Another lock library. */
    COMPETITOR,
    /**
     * The simplest two-request lock a user would write by hand against the store (take if free,
     * delete if still ours): no token, no renewal, no waiting ({@link SimpleLocks}).
     */
    SIMPLE,
    /**
     * The raw driver doing B3's handoff by hand (release that notifies, notification, conditional
     * write): the yardstick of ours' handoff latency ({@link RawHandoffs}); B3 only.
     */
    RAW_HANDOFF
}
