package io.reactivelocks.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The backend's view of Curator's connection: a {@link ConnectionStateListener} (called on
 * Curator's connection-state thread, one state at a time) that republishes the states as a hot
 * stream, and reads of the current session id and negotiated session timeout that never block.
 *
 * <p>SUSPENDED needs no action here: confirmations stop succeeding, so held leases run out on
 * their local deadline unless RECONNECTED comes first. LOST means the session is gone (expired
 * on the server, or Curator gave up after a whole session timeout in SUSPENDED and moved to a
 * new session): everything that depended on it ends at once.
 */
final class ZooKeeperSession implements ConnectionStateListener {

    private static final Logger LOG = Loggers.getLogger(ZooKeeperSession.class);

    private final CuratorFramework client;
    private final Sinks.Many<ConnectionState> states = Sinks.many().multicast().directBestEffort();

    ZooKeeperSession(CuratorFramework client) {
        this.client = client;
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState newState) {
        LOG.debug("zookeeper connection {} (session 0x{})", newState, Long.toHexString(sessionId()));
        Sinks.EmitResult r = states.tryEmitNext(newState);
        if (r.isFailure() && r != Sinks.EmitResult.FAIL_ZERO_SUBSCRIBER && r != Sinks.EmitResult.FAIL_TERMINATED) {
            LOG.warn("could not publish zookeeper connection state {}: {}", newState, r);
        }
    }

    /** @return every state change from now on; completes when the backend closes */
    Flux<ConnectionState> changes() {
        return states.asFlux();
    }

    /** @return completes at the next LOST (or when the backend closes) */
    Mono<Void> lost() {
        return states.asFlux().filter(s -> s == ConnectionState.LOST).next().then();
    }

    /** @return one element per RECONNECTED from now on */
    Flux<ConnectionState> reconnects() {
        return states.asFlux().filter(s -> s == ConnectionState.RECONNECTED);
    }

    /**
     * @return the id of the session of Curator's current ZooKeeper handle; 0 when it has none yet
     *         (connecting after a LOST) or the client is not started. A handle keeps one session
     *         for life, and Curator makes a new handle after an expiry before it reports LOST.
     */
    long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** @return the session timeout the server granted at the last connection, in ms; 0 before the first */
    long negotiatedTimeoutMillis() {
        return client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
    }

    void close() {
        states.tryEmitComplete();
    }
}
