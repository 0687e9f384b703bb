package io.reactivelocks.test.server;

import io.reactivelocks.test.fault.FaultProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A PostgreSQL primary with one streaming replica, from the Debian binaries on loopback (as
 * {@link PostgresServer}: {@code initdb}, run as the {@code postgres} OS user when this JVM is
 * root). The replica is cloned with {@code pg_basebackup -R} and streams from the primary
 * <em>through a {@link FaultProxy}</em> (one proxy in front of each node, carrying only the
 * replication traffic), so the fixture can cut or slow replication while clients still reach every
 * node directly.
 *
 * <p>PostgreSQL has no automatic failover; this fixture plays the operator tooling (Patroni,
 * repmgr, a cloud's managed failover): {@link #killLeader()} SIGKILLs the primary and promotes the
 * replica ({@code SELECT pg_promote()}); {@link #failover()} is a planned switchover (fast shutdown
 * of the primary, which first sends all its WAL to the replica, then promotion); {@link #heal()}
 * re-clones every node that is down as a replica of the current primary ({@code pg_basebackup}) and
 * waits until it streams. {@link #partitionLeader()} blackholes the replication proxy of the
 * primary — without consensus there is nobody to decide a promotion, so the primary keeps serving
 * clients and the replica falls behind (with synchronous replication, commits on the primary wait
 * until {@link #heal()}). {@link #slowNode(Duration)} delays the replication stream.
 *
 * <p>Replication is asynchronous by default; {@link Builder#synchronous(boolean)} (or
 * {@link #synchronousReplication(boolean)} at run time) sets {@code synchronous_standby_names = '*'}
 * with {@code synchronous_commit = on} on the primary, so a commit returns only once the replica
 * has flushed its WAL. A freshly promoted primary runs without a synchronous standby until
 * {@link #heal()} has attached the re-cloned node (as Patroni's non-strict synchronous mode does),
 * so that it serves writes at once.
 *
 * <p>Every method blocks the calling (test) thread, bounded by a start timeout.
 */
public final class PostgresReplicaTopology implements Topology {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final Path bin;
    private final String username;
    private final String password;
    private final String database;
    private final List<Node> nodes = new ArrayList<>();
    private volatile int primary;
    private volatile boolean synchronous;

    /** One PostgreSQL process and the proxy in front of it that its replica streams through. */
    private static final class Node {
        final ServerProcess process;
        final FaultProxy replicationProxy;

        Node(ServerProcess process) {
            this.process = process;
            this.replicationProxy = FaultProxy.start(process.host(), process.port());
        }
    }

    private PostgresReplicaTopology(Builder b) {
        this.bin = PostgresServer.Builder.binDirectory().orElseThrow(() -> new ServerUnavailableException(
                "no PostgreSQL server binaries (postgres, initdb, pg_basebackup) in /usr/lib/postgresql/<version>/bin. "
                        + PostgresServer.INSTALL_HINT));
        this.username = PostgresServer.DEFAULT_NAME;
        this.password = PostgresServer.DEFAULT_NAME;
        this.database = PostgresServer.DEFAULT_NAME;
        this.synchronous = b.synchronous;
    }

    /**
     * Starts a primary and an asynchronous streaming replica.
     *
     * @return the running topology
     * @throws ServerUnavailableException when the PostgreSQL binaries are missing
     * @throws ServerStartException when a node does not start in time
     */
    public static PostgresReplicaTopology start() {
        return builder().start();
    }

    /** @return a builder, e.g. for synchronous replication */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of the topology; {@link #start()} starts it. */
    public static final class Builder {
        private boolean synchronous;

        private Builder() {
        }

        /**
         * Chooses synchronous replication ({@code synchronous_standby_names = '*'}) instead of the
         * default asynchronous one.
         *
         * @param synchronous whether commits wait for the replica
         * @return this builder
         */
        public Builder synchronous(boolean synchronous) {
            this.synchronous = synchronous;
            return this;
        }

        /**
         * Starts the primary, clones the replica from it and waits until it streams.
         *
         * @return the running topology
         * @throws ServerUnavailableException when the PostgreSQL binaries are missing
         * @throws ServerStartException when a node does not start in time
         */
        public PostgresReplicaTopology start() {
            PostgresReplicaTopology t = new PostgresReplicaTopology(this);
            try {
                t.startNodes();
                return t;
            } catch (RuntimeException | Error e) {
                t.close();
                throw e;
            }
        }
    }

    private void startNodes() {
        ServerProcess first = ServerProcess.builder("postgres")
                .prepare(this::initdb)
                .command(this::command)
                .readiness(l -> Probes.postgresReady(l.host(), l.port(), username, "postgres"))
                .afterFirstStart(this::createDatabase)
                .start();
        nodes.add(new Node(first));
        primary = 0;
        ServerProcess second = ServerProcess.builder("postgres")
                .prepare(l -> cloneInto(l, nodes.get(0)))
                .command(this::command)
                .readiness(l -> Probes.postgresReady(l.host(), l.port(), username, "postgres"))
                .start();
        nodes.add(new Node(second));
        awaitStreaming();
        applySynchronous();
    }

    @Override
    public String name() {
        return "postgres-replica";
    }

    /**
     * An R2DBC URL naming both nodes, that connects to whichever is primary:
     * {@code r2dbc:postgresql:failover://test:test@h:p1,h:p2/test} with the options
     * {@code targetServerType=primary} and {@code hostRecheckTime=500ms}.
     *
     * @return the multi-host URL
     */
    @Override
    public String endpoints() {
        StringBuilder hosts = new StringBuilder();
        for (Node n : nodes) {
            if (hosts.length() > 0) {
                hosts.append(',');
            }
            hosts.append(n.process.host()).append(':').append(n.process.port());
        }
        return "r2dbc:postgresql:failover://" + Probes.encode(username) + ":" + Probes.encode(password) + "@" + hosts + "/"
                + Probes.encode(database) + "?targetServerType=primary&hostRecheckTime=500ms";
    }

    /** @return the superuser clients log in as */
    public String username() {
        return username;
    }

    /** @return its password (TCP connections are trusted) */
    public String password() {
        return password;
    }

    /** @return the database created for tests */
    public String database() {
        return database;
    }

    @Override
    public List<ServerHandle> nodes() {
        return nodes.stream().map(n -> (ServerHandle) n.process).toList();
    }

    /**
     * The node the fixture last made primary, checked with {@code pg_is_in_recovery()}.
     *
     * @return the primary
     * @throws IllegalStateException when it is down or not a primary
     */
    @Override
    public ServerHandle leader() {
        Node p = nodes.get(primary);
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() - deadline < 0) {
            if (p.process.isAlive()) {
                Commands.Result r = psql(p, "SELECT pg_is_in_recovery()");
                if (r.ok() && r.output().strip().equals("f")) {
                    return p.process;
                }
                last = r.output();
            } else {
                last = "down";
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
        throw new IllegalStateException("no primary within " + WAIT + ": " + p.process + " answered " + last);
    }

    /** @return the replica the fixture keeps streaming, whether it runs or not */
    public ServerHandle replica() {
        return nodes.get(1 - primary).process;
    }

    /** @return whether commits on the primary wait for the replica */
    public boolean synchronous() {
        return synchronous;
    }

    /**
     * Switches the primary between synchronous ({@code synchronous_standby_names = '*'}) and
     * asynchronous replication with {@code ALTER SYSTEM} and a reload.
     *
     * @param on whether commits must wait for the replica
     */
    public void synchronousReplication(boolean on) {
        synchronous = on;
        applySynchronous();
    }

    /** Cuts the replication stream (blackhole of the primary's replication proxy) until {@link #heal()}. */
    public void pauseReplication() {
        nodes.get(primary).replicationProxy.blackhole();
    }

    /** SIGKILLs the primary, then promotes the replica as the operator tooling would. */
    @Override
    public void killLeader() {
        Node old = nodes.get(primary);
        old.process.kill();
        promote(1 - primary);
    }

    /** Stops the primary cleanly (fast shutdown: its WAL reaches the replica first), then promotes the replica. */
    @Override
    public void failover() {
        Node old = nodes.get(primary);
        nodes.get(primary).replicationProxy.heal();
        if (old.process.isAlive()) {
            long pid = old.process.pid();
            Commands.signal("INT", List.of(pid));
            ProcessHandle.of(pid).ifPresent(h -> {
                try {
                    h.onExit().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while stopping " + old.process, e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException(old.process + " did not shut down within " + WAIT, e);
                }
            });
            old.process.kill(); // reaps what may be left
        }
        promote(1 - primary);
    }

    /** Blackholes the primary's replication proxy: the replica is cut off, clients still reach the primary. */
    @Override
    public void partitionLeader() {
        pauseReplication();
    }

    /**
     * Delays the replication stream of the primary (both directions) until {@link #heal()}.
     *
     * @param latency the delay added to every chunk
     */
    @Override
    public void slowNode(Duration latency) {
        Objects.requireNonNull(latency, "latency");
        nodes.get(primary).replicationProxy.latency(latency, Duration.ZERO);
    }

    /**
     * Removes proxy faults, re-clones every node that is down as a replica of the current primary,
     * waits until it streams and (in synchronous mode) makes it the synchronous standby again.
     */
    @Override
    public void heal() {
        nodes.forEach(n -> n.replicationProxy.heal());
        Node p = nodes.get(primary);
        if (!p.process.isAlive()) {
            // nobody promoted anything: bring the primary back as it was
            p.process.restart();
        }
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            if (i != primary && !n.process.isAlive()) {
                reclone(n, p);
            }
        }
        awaitStreaming();
        applySynchronous();
        Commands.Result r = psql(p, "SELECT txid_current()");
        if (!r.ok()) {
            throw new IllegalStateException("the primary " + p.process + " does not serve writes after heal: " + r.output());
        }
    }

    @Override
    public void close() {
        for (Node n : nodes) {
            n.replicationProxy.close();
            n.process.close();
        }
    }

    @Override
    public String toString() {
        return "PostgresReplicaTopology[primary " + nodes.get(primary).process + ", replica "
                + nodes.get(1 - primary).process + (synchronous ? ", synchronous" : ", asynchronous") + "]";
    }

    // ------------------------------------------------------------------ operator steps

    private void promote(int index) {
        Node n = nodes.get(index);
        Commands.Result r = psql(n, "SELECT pg_promote(true, 60)");
        if (!r.ok() || !r.output().strip().equals("t")) {
            throw new IllegalStateException("cannot promote " + n.process + ": " + r.output() + "\n" + n.process.logTail(20));
        }
        // a new primary has no standby yet: commits must not wait for one (cloned settings)
        psql(n, "ALTER SYSTEM RESET synchronous_standby_names");
        psql(n, "SELECT pg_reload_conf()");
        primary = index;
    }

    private void applySynchronous() {
        Node p = nodes.get(primary);
        Commands.Result r = psql(p, synchronous
                ? "ALTER SYSTEM SET synchronous_standby_names = '*'" : "ALTER SYSTEM RESET synchronous_standby_names");
        if (!r.ok()) {
            throw new IllegalStateException("cannot set synchronous_standby_names on " + p.process + ": " + r.output());
        }
        psql(p, "SELECT pg_reload_conf()");
        if (synchronous) {
            awaitQuery(p, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'", "1");
        }
    }

    private void awaitStreaming() {
        Node p = nodes.get(primary);
        awaitQuery(p, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
                Integer.toString(nodes.size() - 1));
    }

    private void awaitQuery(Node n, String sql, String expected) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() - deadline < 0) {
            Commands.Result r = psql(n, sql);
            last = r.output().strip();
            if (r.ok() && last.equals(expected)) {
                return;
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
        throw new IllegalStateException("`" + sql + "` on " + n.process + " did not give " + expected + " within " + WAIT
                + " (last: " + last + ")");
    }

    private void reclone(Node target, Node from) {
        target.process.kill();
        ServerProcess.Layout l = target.process.layout();
        Commands.deleteTree(l.path("data"));
        cloneInto(l, from);
        target.process.restart();
    }

    // ------------------------------------------------------------------ commands

    private List<String> command(ServerProcess.Layout layout) {
        List<String> cmd = new ArrayList<>(PostgresServer.Builder.command(bin, layout));
        cmd.addAll(List.of("-c", "wal_retrieve_retry_interval=200ms", "-c", "wal_receiver_timeout=10s",
                "-c", "wal_sender_timeout=10s", "-c", "synchronous_commit=on"));
        return cmd;
    }

    private Commands.Result psql(Node n, String sql) {
        ServerProcess.Layout l = n.process.layout();
        List<String> cmd = List.of(bin.resolve("psql").toString(), "-X", "-A", "-t", "-q",
                "-h", l.path("socket").toString(), "-p", Integer.toString(l.port()), "-U", username,
                "-d", "postgres", "-c", sql);
        return Commands.run(cmd, l.directory(), null, COMMAND_TIMEOUT);
    }

    private void initdb(ServerProcess.Layout layout) {
        Path data = makeDirectories(layout);
        try {
            Path pwfile = layout.path("pwfile");
            Files.writeString(pwfile, password + "\n", StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(pwfile, PosixFilePermissions.fromString("rw-------"));
            PostgresServer.Builder.giveToPostgres(pwfile);
            List<String> cmd = new ArrayList<>(PostgresServer.Builder.asPostgres());
            cmd.addAll(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", username,
                    "--pwfile=" + pwfile, "-E", "UTF8", "--locale=C", "--no-sync",
                    "--auth-local=trust", "--auth-host=trust"));
            Commands.Result r = Commands.run(cmd, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
            Files.deleteIfExists(pwfile);
            if (!r.ok()) {
                throw new ServerStartException("initdb failed (exit " + r.exitCode() + ")\nlog " + layout.logFile()
                        + " ends with:\n" + Commands.tail(layout.logFile(), 40), null);
            }
        } catch (IOException e) {
            throw new ServerStartException("cannot prepare a PostgreSQL data dir in " + layout.directory() + ": " + e, e);
        }
    }

    private void createDatabase(ServerProcess.Layout layout) {
        List<String> cmd = List.of(bin.resolve("createdb").toString(), "-h", layout.path("socket").toString(),
                "-p", Integer.toString(layout.port()), "-U", username, database);
        Commands.Result r = Commands.run(cmd, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
        if (!r.ok()) {
            throw new ServerStartException("createdb failed (exit " + r.exitCode() + ")\nlog " + layout.logFile()
                    + " ends with:\n" + Commands.tail(layout.logFile(), 40), null);
        }
    }

    /** Clones {@code from} into the empty data dir of {@code layout}, streaming through {@code from}'s proxy. */
    private void cloneInto(ServerProcess.Layout layout, Node from) {
        Path data = makeDirectories(layout);
        List<String> cmd = new ArrayList<>(PostgresServer.Builder.asPostgres());
        cmd.addAll(List.of(bin.resolve("pg_basebackup").toString(),
                "-d", "host=" + from.replicationProxy.host() + " port=" + from.replicationProxy.port()
                        + " user=" + username + " connect_timeout=5 application_name=replica" + layout.port(),
                "-D", data.toString(), "-R", "-X", "stream", "-c", "fast", "--no-sync"));
        Commands.Result r = Commands.run(cmd, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
        if (!r.ok()) {
            throw new ServerStartException("pg_basebackup failed (exit " + r.exitCode() + ")\nlog " + layout.logFile()
                    + " ends with:\n" + Commands.tail(layout.logFile(), 40), null);
        }
    }

    private static Path makeDirectories(ServerProcess.Layout layout) {
        try {
            Files.setPosixFilePermissions(layout.directory(), PosixFilePermissions.fromString("rwxr-xr-x"));
            Path data = layout.path("data");
            Files.createDirectories(data);
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwx------"));
            Path socket = Files.createDirectories(layout.path("socket"));
            PostgresServer.Builder.giveToPostgres(data);
            PostgresServer.Builder.giveToPostgres(socket);
            return data;
        } catch (IOException e) {
            throw new ServerStartException("cannot prepare a PostgreSQL data dir in " + layout.directory() + ": " + e, e);
        }
    }
}
