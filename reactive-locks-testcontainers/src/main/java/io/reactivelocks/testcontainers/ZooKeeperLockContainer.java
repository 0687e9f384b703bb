package io.reactivelocks.testcontainers;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A standalone ZooKeeper server in a container (the official {@code zookeeper:3.8} image by default),
 * handing out a started Curator {@link CuratorFramework} and {@link LockClient}s over it. Needs
 * {@code reactive-locks-zookeeper} on the class path. Everything it handed out is closed when the
 * container stops.
 *
 * <pre>{@code
 * try (ZooKeeperLockContainer zk = new ZooKeeperLockContainer()) {
 *     zk.start();
 *     LockClient locks = zk.lockClient();
 * }
 * }</pre>
 */
public class ZooKeeperLockContainer extends GenericContainer<ZooKeeperLockContainer> {

    /** The official image this container runs unless given another. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("zookeeper:3.8");

    /** The client port inside the container. */
    public static final int CLIENT_PORT = 2181;

    private final LockClients<CuratorFramework> clients = new LockClients<>(CuratorFramework::close);
    private Duration sessionTimeout = Duration.ofSeconds(10);

    /** A container of {@link #DEFAULT_IMAGE}. */
    public ZooKeeperLockContainer() {
        this(DEFAULT_IMAGE);
    }

    /**
     * @param image an image name, e.g. {@code "zookeeper:3.9"}
     * @throws IllegalStateException when the image is not {@code zookeeper} nor declared compatible with it
     */
    public ZooKeeperLockContainer(String image) {
        this(DockerImageName.parse(Objects.requireNonNull(image, "image")));
    }

    /**
     * @param image {@code zookeeper}, or an image declared its substitute with
     *              {@link DockerImageName#asCompatibleSubstituteFor(String)}
     * @throws IllegalStateException when the image is not {@code zookeeper} nor declared compatible with it
     */
    public ZooKeeperLockContainer(DockerImageName image) {
        super(Objects.requireNonNull(image, "image"));
        image.assertCompatibleWith(DockerImageName.parse("zookeeper"));
        withExposedPorts(CLIENT_PORT);
        withEnv("ZOO_4LW_COMMANDS_WHITELIST", "srvr,ruok");
        waitingFor(Wait.forLogMessage("(?s).*binding to port.*", 1).withStartupTimeout(Duration.ofSeconds(90)));
    }

    /**
     * Sets the session timeout of the Curator client the container makes (10 s unless set); the
     * server's tick time bounds it (2 s ticks: 4 s to 40 s).
     *
     * @param timeout the session timeout
     * @return this container
     * @throws IllegalArgumentException when {@code timeout} is not positive
     */
    public ZooKeeperLockContainer withSessionTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        this.sessionTimeout = timeout;
        return self();
    }

    /**
     * @return the connect string on the host ({@code host:port})
     * @throws IllegalStateException when the container is not running
     */
    public String connectString() {
        LockClients.requireRunning(isRunning());
        return getHost() + ":" + getMappedPort(CLIENT_PORT);
    }

    /**
     * @return the container's started Curator client (made on the first call), closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public CuratorFramework curator() {
        return clients.storeClient(isRunning(), () -> {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(connectString())
                    .sessionTimeoutMs((int) sessionTimeout.toMillis())
                    .connectionTimeoutMs(10_000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 5))
                    .build();
            c.start();
            return c;
        });
    }

    /**
     * @return a new lock client with {@link LockOptions#defaults()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient() {
        return lockClient(LockOptions.defaults());
    }

    /**
     * @param options the lock client's default options
     * @return a new lock client over {@link #curator()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(LockOptions options) {
        return lockClient(ZooKeeperLockOptions.defaults(), options);
    }

    /**
     * @param zkOptions the root path of the lock nodes
     * @param options   the lock client's default options
     * @return a new lock client over {@link #curator()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(ZooKeeperLockOptions zkOptions, LockOptions options) {
        Objects.requireNonNull(zkOptions, "zkOptions");
        Objects.requireNonNull(options, "options");
        return clients.add(ZooKeeperLocks.connect(curator(), zkOptions), options);
    }

    /** Closes the clients it handed out, then stops the container. */
    @Override
    public void stop() {
        try {
            clients.close();
        } finally {
            super.stop();
        }
    }
}
