package io.reactivelocks.safety;

import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import java.time.Duration;

/**
 * What a safety run runs against: one server of a store ({@link SafetyBackend}) or a replicated
 * deployment of one ({@link SafetyTopology}). A worker JVM finds its store by {@link #name()} and
 * connects with {@link #connect}.
 */
public sealed interface SafetyStore permits SafetyBackend, SafetyTopology {

    /**
     * The constant's name, used on worker command lines and in reports (lower-cased).
     *
     * @return the name
     */
    String name();

    /**
     * The store's lower bound on a lease (session stores work in whole seconds).
     *
     * @return the shortest lease a run uses
     */
    Duration minimumLease();

    /**
     * Connects one worker (called in the worker JVM).
     *
     * @param host      where the worker's proxy listens (single servers), or {@code -}
     * @param port      the proxy's port, or 0
     * @param extra     credentials (single servers) or the deployment's endpoints (topologies), without spaces
     * @param namespace the run's key prefix / table / root
     * @param options   the lock options of the run
     * @param listener  the worker's listener
     * @return the client and what to close after it
     */
    SafetyBackend.Connection connect(String host, int port, String extra, String namespace, LockOptions options, LockListener listener);

    /**
     * Finds a store by its name.
     *
     * @param name a {@link SafetyBackend} or {@link SafetyTopology} constant's name
     * @return the store
     * @throws IllegalArgumentException when there is none of that name
     */
    static SafetyStore named(String name) {
        for (SafetyBackend b : SafetyBackend.values()) {
            if (b.name().equals(name)) {
                return b;
            }
        }
        for (SafetyTopology t : SafetyTopology.values()) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("no safety backend or topology named " + name);
    }
}
