package io.reactivelocks.test.server;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A server in a container, run through Testcontainers (the optional dependency
 * {@code org.testcontainers:testcontainers}) on whatever Docker API it finds ({@code DOCKER_HOST},
 * {@code ~/.testcontainers.properties}, or the default socket; podman's service works too). The
 * container publishes its port on 127.0.0.1 at a fixed host port, so {@link #restart()} keeps it;
 * pause/resume/kill map to the Docker API's pause, unpause and kill. The image is the official one
 * unless the system property {@value #IMAGE_PROPERTY_PREFIX}{@code <kind>} names another.
 */
final class DockerContainer implements ServerHandle {

    /** Prefix of the system properties naming the image per kind ({@code redis}, {@code postgres}, ...). */
    static final String IMAGE_PROPERTY_PREFIX = "reactive-locks.fixture.image.";

    private static final String TESTCONTAINERS_CLASS = "org.testcontainers.DockerClientFactory";
    private static final Set<DockerContainer> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(DockerContainer::close),
                "reactive-locks-container-reaper"));
    }

    private final String name;
    private final GenericContainer<?> container;
    private final int port;
    private final Predicate<Integer> readiness;
    private final Duration startTimeout;

    private DockerContainer(String name, GenericContainer<?> container, int port, Predicate<Integer> readiness,
                            Duration startTimeout) {
        this.name = name;
        this.container = container;
        this.port = port;
        this.readiness = readiness;
        this.startTimeout = startTimeout;
    }

    /** Returns why no container can be started, or empty when Testcontainers finds a Docker API. */
    static Optional<String> unavailableReason() {
        try {
            Class.forName(TESTCONTAINERS_CLASS, false, DockerContainer.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return Optional.of("org.testcontainers:testcontainers is not on the class path");
        }
        return DockerClientFactory.instance().isDockerAvailable() ? Optional.empty()
                : Optional.of("Testcontainers finds no Docker API (DOCKER_HOST=" + System.getenv("DOCKER_HOST")
                        + "; with podman: `podman system service --time=0 unix:///run/podman/podman.sock`)");
    }

    /**
     * @param kind         the fixture kind, e.g. {@code redis}
     * @param defaultImage the official image
     * @return the image named by {@value #IMAGE_PROPERTY_PREFIX}{@code <kind>}, else {@code defaultImage}
     */
    static String image(String kind, String defaultImage) {
        return System.getProperty(IMAGE_PROPERTY_PREFIX + kind, defaultImage);
    }

    /** The container, not started: {@code image} with {@code args}, publishing one port on 127.0.0.1. */
    static GenericContainer<?> container(String image, int hostPort, int containerPort, Map<String, String> env,
                                         List<String> args) {
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(image));
        env.forEach(c::withEnv);
        if (!args.isEmpty()) {
            c.withCommand(args.toArray(String[]::new));
        }
        ExposedPort exposed = ExposedPort.tcp(containerPort);
        c.withCreateContainerCmdModifier(cmd -> {
            cmd.withExposedPorts(exposed);
            cmd.getHostConfig().withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort(Loopback.HOST, hostPort),
                    exposed));
        });
        return c;
    }

    /**
     * Starts a container of {@link #image(String, String) image(name, image)} and waits until the
     * readiness probe (given the host port) passes.
     */
    static DockerContainer start(String name, String image, int containerPort, Map<String, String> env,
                                 List<String> args, Predicate<Integer> readiness, Duration startTimeout) {
        int hostPort = Loopback.freePorts(1).get(0);
        String chosen = image(name, image);
        GenericContainer<?> c = container(chosen, hostPort, containerPort, env, args);
        try {
            c.start();
        } catch (RuntimeException e) {
            throw new ServerStartException("cannot start " + name + " container of " + chosen + ": " + e, e);
        }
        DockerContainer d = new DockerContainer(name, c, hostPort, readiness, startTimeout);
        LIVE.add(d);
        try {
            d.awaitReady();
        } catch (RuntimeException e) {
            d.close();
            throw e;
        }
        return d;
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
                String logs = container.getLogs();
                List<String> lines = List.of(logs.split("\n"));
                throw new ServerStartException(name + " container " + container.getContainerId() + " was not ready within "
                        + startTimeout + "; logs end with:\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())), null);
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
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
        InspectContainerResponse.ContainerState state = container.getDockerClient()
                .inspectContainerCmd(container.getContainerId()).exec().getState();
        Long pid = state.getPidLong();
        if (pid == null || pid <= 0) {
            throw new UnsupportedOperationException("no pid for container " + container.getContainerId() + ": " + state);
        }
        return pid;
    }

    @Override
    public void pause() {
        container.getDockerClient().pauseContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public void resume() {
        container.getDockerClient().unpauseContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public void kill() {
        container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public void restart() {
        try {
            kill();
        } catch (RuntimeException alreadyStopped) {
            // restart a killed container too
        }
        container.getDockerClient().startContainerCmd(container.getContainerId()).exec();
        awaitReady();
    }

    @Override
    public void close() {
        if (LIVE.remove(this)) {
            container.stop();
        }
    }

    @Override
    public String toString() {
        return "DockerContainer[" + name + " " + container.getContainerId() + " 127.0.0.1:" + port + "]";
    }
}
