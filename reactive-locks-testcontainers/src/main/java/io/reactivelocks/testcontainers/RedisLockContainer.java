package io.reactivelocks.testcontainers;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import java.time.Duration;
import java.util.Objects;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis server in a container (the official {@code redis:7} image by default), handing out a
 * Lettuce {@link RedisClient} and {@link LockClient}s over it. Needs {@code reactive-locks-redis} on
 * the class path. Everything it handed out is closed when the container stops.
 *
 * <pre>{@code
 * try (RedisLockContainer redis = new RedisLockContainer()) {
 *     redis.start();
 *     LockClient locks = redis.lockClient();
 * }
 * }</pre>
 */
public class RedisLockContainer extends GenericContainer<RedisLockContainer> {

    /** The official image this container runs unless given another. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("redis:7");

    /** The port Redis listens on inside the container. */
    public static final int REDIS_PORT = 6379;

    private final LockClients<RedisClient> clients = new LockClients<>(RedisClient::shutdown);

    /** A container of {@link #DEFAULT_IMAGE}. */
    public RedisLockContainer() {
        this(DEFAULT_IMAGE);
    }

    /**
     * @param image an image name, e.g. {@code "redis:7.2"}
     * @throws IllegalStateException when the image is not {@code redis} nor declared compatible with it
     */
    public RedisLockContainer(String image) {
        this(DockerImageName.parse(Objects.requireNonNull(image, "image")));
    }

    /**
     * @param image {@code redis}, or an image declared its substitute with
     *              {@link DockerImageName#asCompatibleSubstituteFor(String)}
     * @throws IllegalStateException when the image is not {@code redis} nor declared compatible with it
     */
    public RedisLockContainer(DockerImageName image) {
        super(Objects.requireNonNull(image, "image"));
        image.assertCompatibleWith(DockerImageName.parse("redis"));
        withExposedPorts(REDIS_PORT);
        waitingFor(Wait.forLogMessage("(?s).*Ready to accept connections.*", 1)
                .withStartupTimeout(Duration.ofSeconds(60)));
    }

    /**
     * @return the server's URI on the host ({@code redis://host:port})
     * @throws IllegalStateException when the container is not running
     */
    public RedisURI redisUri() {
        LockClients.requireRunning(isRunning());
        return RedisURI.create(getHost(), getMappedPort(REDIS_PORT));
    }

    /**
     * @return the container's Lettuce client (made on the first call), shut down when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public RedisClient redisClient() {
        return clients.storeClient(isRunning(), () -> RedisClient.create(redisUri()));
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
     * @return a new lock client over {@link #redisClient()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(LockOptions options) {
        return lockClient(RedisLockOptions.defaults(), options);
    }

    /**
     * @param redisOptions key prefix and fencing counter lifetime
     * @param options      the lock client's default options
     * @return a new lock client over {@link #redisClient()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(redisOptions, "redisOptions");
        Objects.requireNonNull(options, "options");
        return clients.add(RedisLocks.connect(redisClient(), redisOptions), options);
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
