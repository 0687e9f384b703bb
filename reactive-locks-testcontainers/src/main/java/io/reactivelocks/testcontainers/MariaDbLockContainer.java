package io.reactivelocks.testcontainers;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import java.time.Duration;
import java.util.Objects;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A MariaDB server in a container (the official {@code mariadb:10.11} image by default) with a
 * database and a user of its own, handing out an R2DBC {@link ConnectionFactory} and
 * {@link LockClient}s over it. Needs {@code reactive-locks-r2dbc}
 * and {@code org.mariadb:r2dbc-mariadb} on the class path. Everything it handed out is closed when
 * the container stops.
 *
 * <pre>{@code
 * try (MariaDbLockContainer db = new MariaDbLockContainer()) {
 *     db.start();
 *     LockClient locks = db.lockClient();
 * }
 * }</pre>
 */
public class MariaDbLockContainer extends GenericContainer<MariaDbLockContainer> {

    /** The official image this container runs unless given another. */
    public static final DockerImageName DEFAULT_IMAGE = DockerImageName.parse("mariadb:10.11");

    /** The port MariaDB listens on inside the container. */
    public static final int MARIADB_PORT = 3306;

    /** The default database, user and password: {@value}. */
    public static final String DEFAULT_NAME = "test";

    private final LockClients<ConnectionFactory> clients = new LockClients<>(factory -> { });
    private String databaseName = DEFAULT_NAME;
    private String username = DEFAULT_NAME;
    private String password = DEFAULT_NAME;

    /** A container of {@link #DEFAULT_IMAGE}. */
    public MariaDbLockContainer() {
        this(DEFAULT_IMAGE);
    }

    /**
     * @param image an image name, e.g. {@code "mariadb:11.4"}
     * @throws IllegalStateException when the image is not {@code mariadb} nor declared compatible with it
     */
    public MariaDbLockContainer(String image) {
        this(DockerImageName.parse(Objects.requireNonNull(image, "image")));
    }

    /**
     * @param image {@code mariadb}, or an image declared its substitute with
     *              {@link DockerImageName#asCompatibleSubstituteFor(String)}
     * @throws IllegalStateException when the image is not {@code mariadb} nor declared compatible with it
     */
    public MariaDbLockContainer(DockerImageName image) {
        super(Objects.requireNonNull(image, "image"));
        image.assertCompatibleWith(DockerImageName.parse("mariadb"));
        withExposedPorts(MARIADB_PORT);
        // the image's set-up server runs without networking ("port: 0"); the real one logs "port: 3306"
        waitingFor(Wait.forLogMessage("(?s).*port: " + MARIADB_PORT + " .*", 1).withStartupTimeout(Duration.ofSeconds(90)));
    }

    /**
     * Sets the database the image creates (default {@value #DEFAULT_NAME}).
     *
     * @param databaseName letters, digits and {@code _}
     * @return this container
     * @throws IllegalArgumentException when the name has other characters
     */
    public MariaDbLockContainer withDatabaseName(String databaseName) {
        this.databaseName = word(databaseName, "databaseName");
        return self();
    }

    /**
     * Sets the user the image creates, with every privilege on the database (default {@value #DEFAULT_NAME}).
     *
     * @param username letters, digits and {@code _}
     * @return this container
     * @throws IllegalArgumentException when the name has other characters
     */
    public MariaDbLockContainer withUsername(String username) {
        this.username = word(username, "username");
        return self();
    }

    /**
     * Sets the user's password, which is also root's (default {@value #DEFAULT_NAME}).
     *
     * @param password letters, digits and {@code _}
     * @return this container
     * @throws IllegalArgumentException when the password has other characters
     */
    public MariaDbLockContainer withPassword(String password) {
        this.password = word(password, "password");
        return self();
    }

    /** @return the database the locks' tables go to */
    public String getDatabaseName() {
        return databaseName;
    }

    /** @return the user the connections log in as */
    public String getUsername() {
        return username;
    }

    /** @return the user's password */
    public String getPassword() {
        return password;
    }

    /**
     * @return {@code r2dbc:mariadb://user:password@host:port/database} on the host
     * @throws IllegalStateException when the container is not running
     */
    public String getR2dbcUrl() {
        LockClients.requireRunning(isRunning());
        return "r2dbc:mariadb://" + username + ":" + password + "@" + getHost() + ":" + getMappedPort(MARIADB_PORT) + "/" + databaseName;
    }

    /** Passes the user, password and database to the image before it starts. */
    @Override
    protected void configure() {
        withEnv("MARIADB_DATABASE", databaseName);
        withEnv("MARIADB_USER", username);
        withEnv("MARIADB_PASSWORD", password);
        withEnv("MARIADB_ROOT_PASSWORD", password);
    }

    /**
     * @return the container's R2DBC connection factory (unpooled, made on the first call); the lock
     *         clients pool their own connections
     * @throws IllegalStateException when the container is not running
     */
    public ConnectionFactory connectionFactory() {
        return clients.storeClient(isRunning(), () -> MariadbConnectionFactory.from(
                MariadbConnectionConfiguration.builder()
                        .host(getHost())
                        .port(getMappedPort(MARIADB_PORT))
                        .username(username)
                        .password(password)
                        .database(databaseName)
                        .connectTimeout(Duration.ofSeconds(10))
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
        return lockClient(MariaDbLockOptions.defaults(), options);
    }

    /**
     * @param mariaDbOptions database, table, sequence, schema creation, pool and poll settings
     * @param options        the lock client's default options
     * @return a new lock client over {@link #connectionFactory()}, closed when the container stops
     * @throws IllegalStateException when the container is not running
     */
    public LockClient lockClient(MariaDbLockOptions mariaDbOptions, LockOptions options) {
        Objects.requireNonNull(mariaDbOptions, "mariaDbOptions");
        Objects.requireNonNull(options, "options");
        return clients.add(MariaDbLocks.connect(connectionFactory(), mariaDbOptions), options);
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

    private static String word(String value, String name) {
        Objects.requireNonNull(value, name);
        if (!value.matches("[A-Za-z0-9_]{1,32}")) {
            throw new IllegalArgumentException(name + " must be 1 to 32 letters, digits or '_': " + value);
        }
        return value;
    }
}
