package io.reactivelocks.test.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * A server in a Docker container, driven through the {@code docker} command line (no client library).
 * The container publishes its port on 127.0.0.1 at a fixed host port, so {@link #restart()} keeps
 * it; pause/resume/kill map to {@code docker pause}, {@code unpause}, {@code kill}.
 */
final class DockerContainer implements ServerHandle {

    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(5);
    private static final Set<String> LIVE = ConcurrentHashMap.newKeySet();
    private static volatile String engineProblem;
    private static volatile boolean probed;

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(id ->
                Commands.run(List.of(docker(), "rm", "-f", id), null, null, Duration.ofSeconds(20))),
                "reactive-locks-docker-reaper"));
    }

    private final String name;
    private final String container;
    private final int port;
    private final Predicate<Integer> readiness;
    private final Duration startTimeout;

    private DockerContainer(String name, String container, int port, Predicate<Integer> readiness, Duration startTimeout) {
        this.name = name;
        this.container = container;
        this.port = port;
        this.readiness = readiness;
        this.startTimeout = startTimeout;
    }

    /** Returns why no Docker engine can be used, or empty when {@code docker info} succeeds. */
    static Optional<String> unavailableReason() {
        if (!probed) {
            if (Commands.findExecutable("docker").isEmpty()) {
                engineProblem = "no docker command on the PATH";
            } else {
                Commands.Result r = Commands.run(List.of(docker(), "info"), null, null, Duration.ofSeconds(20));
                engineProblem = r.ok() ? null : "`docker info` failed (no Docker engine answers)";
            }
            probed = true;
        }
        return Optional.ofNullable(engineProblem);
    }

    /** The {@code docker run} command line for a container publishing one port on 127.0.0.1. */
    static List<String> runCommand(String containerName, String image, int hostPort, int containerPort,
                                   Map<String, String> env, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(docker(), "run", "-d", "--name", containerName,
                "-p", Loopback.HOST + ":" + hostPort + ":" + containerPort));
        env.forEach((k, v) -> {
            cmd.add("-e");
            cmd.add(k + "=" + v);
        });
        cmd.add(image);
        cmd.addAll(args);
        return cmd;
    }

    /** Starts a container and waits until the readiness probe (given the host port) passes. */
    static DockerContainer start(String name, String image, int containerPort, Map<String, String> env,
                                 List<String> args, Predicate<Integer> readiness, Duration startTimeout) {
        int hostPort = Loopback.freePorts(1).get(0);
        String containerName = "reactive-locks-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> cmd = runCommand(containerName, image, hostPort, containerPort, env, args);
        Commands.Result r = Commands.run(cmd, null, null, COMMAND_TIMEOUT);
        if (!r.ok()) {
            throw new ServerStartException("cannot start " + name + " container: `" + String.join(" ", cmd) + "`:\n"
                    + r.output(), null);
        }
        LIVE.add(containerName);
        DockerContainer c = new DockerContainer(name, containerName, hostPort, readiness, startTimeout);
        try {
            c.awaitReady();
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static String docker() {
        return "docker";
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + startTimeout.toNanos();
        while (true) {
            try {
                if (readiness.test(port)) {
                    return;
                }
            } catch (RuntimeException ignored) {
                // not ready yet
            }
            if (System.nanoTime() - deadline > 0) {
                Commands.Result logs = Commands.run(List.of(docker(), "logs", "--tail", "40", container), null, null,
                        Duration.ofSeconds(20));
                throw new ServerStartException(name + " container " + container + " was not ready within "
                        + startTimeout + "; logs end with:\n" + logs.output(), null);
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    private void docker(String... args) {
        List<String> cmd = new ArrayList<>(List.of(docker()));
        cmd.addAll(List.of(args));
        Commands.Result r = Commands.run(cmd, null, null, COMMAND_TIMEOUT);
        if (!r.ok()) {
            throw new IllegalStateException("`" + String.join(" ", cmd) + "` failed: " + r.output());
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String host() {
        return Loopback.HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public ServerOrigin origin() {
        return ServerOrigin.CONTAINER;
    }

    @Override
    public boolean supportsFaults() {
        return true;
    }

    @Override
    public long pid() {
        Commands.Result r = Commands.run(List.of(docker(), "inspect", "--format", "{{.State.Pid}}", container), null,
                null, Duration.ofSeconds(20));
        try {
            return Long.parseLong(r.output().trim());
        } catch (NumberFormatException e) {
            throw new UnsupportedOperationException("no pid for container " + container + ": " + r.output(), e);
        }
    }

    @Override
    public void pause() {
        docker("pause", container);
    }

    @Override
    public void resume() {
        docker("unpause", container);
    }

    @Override
    public void kill() {
        docker("kill", container);
    }

    @Override
    public void restart() {
        Commands.run(List.of(docker(), "kill", container), null, null, COMMAND_TIMEOUT);
        docker("start", container);
        awaitReady();
    }

    @Override
    public void close() {
        if (LIVE.remove(container)) {
            Commands.run(List.of(docker(), "rm", "-f", container), null, null, COMMAND_TIMEOUT);
        }
    }

    @Override
    public String toString() {
        return "DockerContainer[" + name + " " + container + " 127.0.0.1:" + port + "]";
    }
}
