package io.reactivelocks.test.server;

import io.reactivelocks.test.fault.FaultProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One redis-server of a topology fixture: the child process, the proxy every other node (and every
 * client that learns addresses from the deployment) reaches it through, and the settings its next
 * restart starts with ({@code replicaof}, the announced proxy ports).
 */
final class RedisTopologyNode {

    final ServerProcess process;
    /** The node's client port as the deployment announces it: other nodes, Sentinels and clients connect here. */
    final FaultProxy proxy;
    /** The cluster-bus proxy (Redis Cluster only), else {@code null}. */
    final FaultProxy busProxy;
    /** The proxy port of the master this node replicates on its next start, or 0 for none. */
    volatile int replicaOf;

    private RedisTopologyNode(ServerProcess process, FaultProxy proxy, FaultProxy busProxy) {
        this.process = process;
        this.proxy = proxy;
        this.busProxy = busProxy;
    }

    /**
     * Starts a redis-server with the common settings (no persistence, diskless replication) plus
     * {@code extra}, computed per start so that restarts see the node's current role, then puts
     * proxies in front of it.
     *
     * @param name     for messages and the temp dir
     * @param binary   the redis-server binary
     * @param cluster  whether this is a cluster node (a second port and a proxy for the bus)
     * @param extra    further arguments for each start, from the node (null before the first start) and the layout
     */
    static RedisTopologyNode start(String name, Path binary, boolean cluster,
                                   java.util.function.BiFunction<RedisTopologyNode, ServerProcess.Layout, List<String>> extra) {
        RedisTopologyNode[] self = new RedisTopologyNode[1];
        ServerProcess process = ServerProcess.builder(name)
                .extraPorts(cluster ? 1 : 0)
                .command(layout -> {
                    List<String> cmd = new ArrayList<>(List.of(binary.toString(),
                            "--port", Integer.toString(layout.port()), "--bind", layout.host(),
                            "--dir", layout.directory().toString(), "--daemonize", "no", "--logfile", "",
                            "--save", "", "--appendonly", "no",
                            "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                            "--repl-ping-replica-period", "1", "--repl-timeout", "5"));
                    cmd.addAll(extra.apply(self[0], layout));
                    return cmd;
                })
                .readiness(layout -> Probes.redisReady(layout.host(), layout.port()))
                .startTimeout(Duration.ofSeconds(30))
                .start();
        FaultProxy proxy = FaultProxy.start(process.host(), process.port());
        FaultProxy bus = cluster ? FaultProxy.start(process.host(), process.layout().extraPort(0)) : null;
        self[0] = new RedisTopologyNode(process, proxy, bus);
        return self[0];
    }

    /** @return the announced (proxy) port */
    int port() {
        return proxy.port();
    }

    /** @return the loopback host */
    String host() {
        return process.host();
    }

    /** Sends a command through the node's own port (not the proxy); throws when unreachable. */
    Object call(String... args) {
        return Resp.call(process.host(), process.port(), args);
    }

    /** Sends a command; {@code null} when unreachable or an error. */
    Object tryCall(String... args) {
        return process.isAlive() && !process.isPaused() ? Resp.tryCall(process.host(), process.port(), args) : null;
    }

    /** @return {@code INFO replication}'s role ("master", "slave") or empty when unreachable */
    Optional<String> role() {
        Object info = tryCall("INFO", "replication");
        String role = Resp.infoField(info, "role");
        return role.isEmpty() ? Optional.empty() : Optional.of(role);
    }

    /** @return the value of a field of {@code INFO section}, or "" */
    String info(String section, String field) {
        return Resp.infoField(tryCall("INFO", section), field);
    }

    /** Removes every proxy fault. */
    void healProxies() {
        proxy.heal();
        if (busProxy != null) {
            busProxy.heal();
        }
    }

    void close() {
        proxy.close();
        if (busProxy != null) {
            busProxy.close();
        }
        process.close();
    }

    static <T> T await(String what, Duration timeout, java.util.function.Supplier<Optional<T>> probe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (true) {
            try {
                Optional<T> v = probe.get();
                if (v.isPresent()) {
                    return v.get();
                }
                last = null;
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after " + timeout + " waiting for " + what, last);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    static boolean awaitTrue(String what, Duration timeout, java.util.function.BooleanSupplier probe) {
        return await(what, timeout, () -> probe.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.empty());
    }
}
