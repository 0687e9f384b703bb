package io.reactivelocks.safety;

/**
 * The two lanes of the short-mode classes: each takes one as a JUnit resource lock, so at most two
 * fault-injection runs (each two or three worker JVMs and a server under faults) go at once, while the
 * light bad-input classes use the third test thread (see {@code junit-platform.properties}). The
 * classes are split so that the lanes last about as long.
 */
final class SafetyLanes {

    /** etcd, MariaDB and the replicated topologies (about 230–350 s in a loaded build). */
    static final String A = "safety-lane-a";
    /** Redis, ZooKeeper, PostgreSQL and the primitives (about 270–320 s; PostgreSQL moved here from A, which lasted 1.3–1.7× B). */
    static final String B = "safety-lane-b";

    private SafetyLanes() {
    }
}
