package io.reactivelocks.safety;

/**
 * The two lanes of the short-mode classes: each takes one as a JUnit resource lock, so at most two
 * fault-injection runs (each two or three worker JVMs and a server under faults) go at once, while the
 * light bad-input classes use the third test thread (see {@code junit-platform.properties}). The
 * classes are split so that the lanes last about as long.
 */
final class SafetyLanes {

    /** etcd, PostgreSQL and the replicated topologies. */
    static final String A = "safety-lane-a";
    /** Redis, ZooKeeper and the primitives. */
    static final String B = "safety-lane-b";

    private SafetyLanes() {
    }
}
