package io.reactivelocks.testcontainers;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import java.time.Duration;
import java.util.Objects;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A PostgreSQL server in a container (Testcontainers' {@link PostgreSQLContainer}, the official
 * {@code postgres:15} image by default), handing out an R2DBC {@link ConnectionFactory} and
 * {@link LockClient}s over it. Needs {@code reactive-locks-r2dbc} and
 * {@code org.testcontainers:testcontainers-postgresql} on the class path. Everything it handed out
 * is closed when the container stops.
 *
 * <pre>{@code
 * try (PostgresLockContainer pg = new PostgresLockContainer()) {
 *     pg.start();
 *     LockClient locks = pg.lockClient();
 * }
 * }</pre>
 */
public class PostgresLockContainer extends PostgreSQLContainer {

    /** The official image this container runs unless given another. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("postgres:15");

    private final LockClients<ConnectionFactory> clients = new LockClients<>(factory -> { });

    /** A container of {@link #DEFAULT_IMAGE}. */
    public PostgresLockContainer() {
        this(DEFAULT_IMAGE);
    }

    /**
     * @param image an image name, e.g. {@code "postgres:16"}
     * @throws IllegalStateException when the image is not {@code postgres} nor declared compatible with it
     */
    public PostgresLockContainer(String image) {
        this(DockerImageName.parse(Objects.requireNonNull(image, "image")));
    }

    /**
     * @param image {@code postgres}, or an image declared its substitute with
     *              {@link DockerImageName#asCompatibleSubstituteFor(String)}
     * @throws IllegalStateException when the image is not {@code postgres} nor declared compatible with it
     */
    public PostgresLockContainer(DockerImageName image) {
        super(Objects.requireNonNull(image, "image"));
        withStartupTimeout(Duration.ofSeconds(90));
    }

    /**
     * @return the container's R2DBC connection factory (unpooled, made on the first call); the lock
     *         clients pool their own connections
     * @throws IllegalStateException when the container is not running
     */
    public ConnectionFactory connectionFactory() {
        return clients.storeClient(isRunning(), () -> new PostgresqlConnectionFactory(
                PostgresqlConnectionConfiguration.builder()
                        .host(getHost())
                        .port(getMappedPort(POSTGRESQL_PORT))
                        .username(getUsername())
                        .password(getPassword())
                        .database(getDatabaseName())
                        .connectTimeout(Duration.ofSeconds(10))
                        .applicationName("reactive-locks-testcontainers")
                        .build()));
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
     * @return a new lock client over {@link #connectionFactory()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(LockOptions options) {
        return lockClient(PostgresLockOptions.defaults(), options);
    }

    /**
     * @param postgresOptions schema, table, channel and pool size
     * @param options         the lock client's default options
     * @return a new lock client over {@link #connectionFactory()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(PostgresLockOptions postgresOptions, LockOptions options) {
        Objects.requireNonNull(postgresOptions, "postgresOptions");
        Objects.requireNonNull(options, "options");
        return clients.add(PostgresLocks.connect(connectionFactory(), postgresOptions), options);
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
