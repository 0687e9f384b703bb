package io.reactivelocks.zookeeper;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.drivers.AdvancedTracerDriver;
import org.apache.curator.drivers.EventTrace;
import org.apache.curator.drivers.OperationTrace;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;

/**
 * A test double on one Curator client a test made for a backend: it listens to the client's
 * connection states (as the backend does) and traces the deletes the client sends (Curator's
 * {@link AdvancedTracerDriver}), so that tests know of lost sessions and of prunes without asking
 * the backend. Attach it before the client starts, so that it sees every state.
 */
final class CuratorCalls extends AdvancedTracerDriver implements ConnectionStateListener {

    private final CuratorFramework client;
    private final List<ConnectionState> states = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicLong> deletes = new ConcurrentHashMap<>();
    private final List<String> operations = new CopyOnWriteArrayList<>();

    private CuratorCalls(CuratorFramework client) {
        this.client = client;
    }

    /**
     * @param client a Curator client not started yet
     * @return the calls of {@code client}, recorded from now on
     */
    static CuratorCalls attach(CuratorFramework client) {
        CuratorCalls calls = new CuratorCalls(client);
        client.getConnectionStateListenable().addListener(calls);
        client.getZookeeperClient().setTracerDriver(calls);
        return calls;
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState newState) {
        states.add(newState);
    }

    @Override
    public void addTrace(OperationTrace trace) {
        operations.add(trace.getName() + (trace.getPath() == null ? "" : " " + trace.getPath()));
        if (trace.getName().startsWith("DeleteBuilderImpl") && trace.getPath() != null) {
            deletes.computeIfAbsent(trace.getPath(), p -> new AtomicLong()).incrementAndGet();
        }
    }

    @Override
    public void addEvent(EventTrace trace) {
    }

    /** @return the operations the client sent and had answered (or failed) so far, in order: the trace's name and path */
    List<String> operations() {
        return List.copyOf(operations);
    }

    /** @return the connection states the client reported so far, in order */
    List<ConnectionState> states() {
        return List.copyOf(states);
    }

    /** @return how many times the client reported its session lost */
    long losses() {
        return states.stream().filter(s -> s == ConnectionState.LOST).count();
    }

    /**
     * @param path a node's path
     * @return how many deletes of {@code path} the client sent and had answered (or failed) so far
     */
    long deletesOf(String path) {
        AtomicLong n = deletes.get(path);
        return n == null ? 0 : n.get();
    }

    /** @return the id of the client's current ZooKeeper session (0 while it has none) */
    long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw new IllegalStateException("no ZooKeeper handle of " + client, e);
        }
    }
}
