package io.reactivelocks.testcontainers;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import java.time.Duration;
import java.util.Objects;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A single-member etcd cluster in a container (the official {@code quay.io/coreos/etcd} image by
 * default), handing out a jetcd {@link Client} and {@link LockClient}s over it. Needs
 * {@code reactive-locks-etcd} on the class path. Everything it handed out is closed when the
 * container stops.
 *
 * <pre>{@code
 * try (EtcdLockContainer etcd = new EtcdLockContainer()) {
 *     etcd.start();
 *     LockClient locks = etcd.lockClient();
 * }
 * }</pre>
 */
public class EtcdLockContainer extends GenericContainer<EtcdLockContainer> {

    /** The official image this container runs unless given another. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("quay.io/coreos/etcd:v3.5.17");

    /** The client port inside the container. */
    public static final int CLIENT_PORT = 2379;

    private final LockClients<Client> clients = new LockClients<>(Client::close);

    /** A container of {@link #DEFAULT_IMAGE}. */
    public EtcdLockContainer() {
        this(DEFAULT_IMAGE);
    }

    /**
     * @param image an image name, e.g. {@code "quay.io/coreos/etcd:v3.5.21"}
     * @throws IllegalStateException when the image is not etcd's nor declared compatible with it
     */
    public EtcdLockContainer(String image) {
        this(DockerImageName.parse(Objects.requireNonNull(image, "image")));
    }

    /**
     * @param image {@code quay.io/coreos/etcd} or {@code gcr.io/etcd-development/etcd}, or an image declared its substitute with
     *              {@link DockerImageName#asCompatibleSubstituteFor(String)}; it must have {@code etcd}
     *              on its {@code PATH}
     * @throws IllegalStateException when the image is not etcd's nor declared compatible with it
     */
    public EtcdLockContainer(DockerImageName image) {
        super(Objects.requireNonNull(image, "image"));
        image.assertCompatibleWith(DockerImageName.parse("quay.io/coreos/etcd"),
                DockerImageName.parse("gcr.io/etcd-development/etcd"));
        withExposedPorts(CLIENT_PORT);
        withCommand("etcd", "--name=reactive-locks", "--data-dir=/tmp/etcd-data",
                "--listen-client-urls=http://0.0.0.0:" + CLIENT_PORT,
                "--advertise-client-urls=http://0.0.0.0:" + CLIENT_PORT);
        waitingFor(Wait.forLogMessage("(?s).*ready to serve client requests.*", 1)
                .withStartupTimeout(Duration.ofSeconds(60)));
    }

    /**
     * @return the client endpoint on the host ({@code http://host:port})
     * @throws IllegalStateException when the container is not running
     */
    public String endpoint() {
        LockClients.requireRunning(isRunning());
        return "http://" + getHost() + ":" + getMappedPort(CLIENT_PORT);
    }

    /**
     * @return the container's jetcd client (made on the first call), closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public Client etcdClient() {
        return clients.storeClient(isRunning(), () -> Client.builder().endpoints(endpoint()).build());
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
     * @return a new lock client over {@link #etcdClient()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(LockOptions options) {
        return lockClient(EtcdLockOptions.defaults(), options);
    }

    /**
     * @param etcdOptions key prefix, session TTL and request timeout
     * @param options     the lock client's default options
     * @return a new lock client over {@link #etcdClient()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(EtcdLockOptions etcdOptions, LockOptions options) {
        Objects.requireNonNull(etcdOptions, "etcdOptions");
        Objects.requireNonNull(options, "options");
        return clients.add(EtcdLocks.connect(etcdClient(), etcdOptions), options);
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
