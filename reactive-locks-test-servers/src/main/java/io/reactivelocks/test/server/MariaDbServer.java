package io.reactivelocks.test.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A MariaDB server for tests. {@link #start()} resolves one through the chain (see {@link FixtureMode}):
 * {@value #URL_VARIABLE} naming a running server; the local binaries ({@code mariadbd} and
 * {@code mariadb-install-db}, Debian package {@code mariadb-server}) with a fresh data dir and
 * {@code mariadbd} itself as the child process, on a random loopback port with its Unix socket inside
 * its temp dir (through {@code setpriv} as the {@code mysql} OS user when this JVM runs as root,
 * because mariadbd refuses root); no embedded server and no container; else it fails saying what to
 * install.
 *
 * <p>The server has a user {@link #username()} (password {@link #password()}, every privilege, from any
 * host) and a database {@link #database()}. Committed data survives {@link #kill()} and
 * {@link #restart()}: InnoDB writes its log to the OS at each commit
 * ({@code innodb_flush_log_at_trx_commit=2}), so only an OS crash could lose it, which tests do not
 * simulate.
 */
public final class MariaDbServer extends ServerFixture {

    /** Environment variable naming a running server, for example {@code mariadb://user:pw@localhost:3306/db}. */
    public static final String URL_VARIABLE = "REACTIVE_LOCKS_MARIADB_URL";

    /** The default user, password and database: {@value}. */
    public static final String DEFAULT_NAME = "test";

    static final String INSTALL_HINT = "Install it with `apt-get install mariadb-server` (or run .ci/install-servers.sh),"
            + " or set " + URL_VARIABLE + "=mariadb://user:password@host:port/database to use a running server.";

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
    private static final String OS_USER = "mysql";

    private final String username;
    private final String password;
    private final String database;
    private final Path socket;

    private MariaDbServer(ServerHandle server, String username, String password, String database, Path socket) {
        super(server);
        this.username = username;
        this.password = password;
        this.database = database;
        this.socket = socket;
    }

    /**
     * Starts (or finds) a MariaDB server with user, password and database {@code test}.
     *
     * @return the running server
     * @throws ServerUnavailableException when no MariaDB can be had; the message says what to install
     * @throws ServerStartException when the server does not start in time
     */
    public static MariaDbServer start() {
        return builder().start();
    }

    /** @return a builder for other credentials or a forced mode */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the user clients log in as (every privilege) */
    public String username() {
        return username;
    }

    /** @return the user's password */
    public String password() {
        return password;
    }

    /** @return the database created for tests */
    public String database() {
        return database;
    }

    /** @return the Unix socket of a local child process, if any */
    public Optional<Path> socket() {
        return Optional.ofNullable(socket);
    }

    /** @return a URL, {@code mariadb://user:password@host:port/database} (the CLI's form) */
    public String url() {
        return "mariadb://" + Probes.encode(username) + ":" + Probes.encode(password) + "@" + host() + ":" + port()
                + "/" + Probes.encode(database);
    }

    /** @return an R2DBC URL, {@code r2dbc:mariadb://user:password@host:port/database} */
    public String r2dbcUrl() {
        return "r2dbc:" + url();
    }

    /** @return a JDBC URL without credentials, {@code jdbc:mariadb://host:port/database} */
    public String jdbcUrl() {
        return "jdbc:mariadb://" + host() + ":" + port() + "/" + Probes.encode(database);
    }

    /** Options for the MariaDB fixture; {@link #start()} resolves and starts the server. */
    public static final class Builder {
        private String username = DEFAULT_NAME;
        private String password = DEFAULT_NAME;
        private String database = DEFAULT_NAME;
        private FixtureMode mode;
        private Duration startTimeout = Duration.ofSeconds(60);

        private Builder() {
        }

        /**
         * Sets the user created for tests (default {@code test}).
         *
         * @param username the user name: letters, digits and {@code _}
         * @return this builder
         */
        public Builder username(String username) {
            this.username = requireWord(username, "username");
            return this;
        }

        /**
         * Sets the user's password (default {@code test}).
         *
         * @param password the password: letters, digits and {@code _}
         * @return this builder
         */
        public Builder password(String password) {
            this.password = requireWord(password, "password");
            return this;
        }

        /**
         * Sets the name of the database created for tests (default {@code test}).
         *
         * @param database the database name: letters, digits and {@code _}
         * @return this builder
         */
        public Builder database(String database) {
            this.database = requireWord(database, "database");
            return this;
        }

        /**
         * Forces one step of the resolution chain instead of the configured mode.
         *
         * @param mode the mode
         * @return this builder
         */
        public Builder mode(FixtureMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Bounds each start and restart (default 60 s).
         *
         * @param timeout the bound
         * @return this builder
         */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Resolves and starts the server.
         *
         * @return the running server
         * @throws ServerUnavailableException when no MariaDB can be had; the message says what to install
         * @throws ServerStartException when the server does not start in time
         */
        public MariaDbServer start() {
            FixtureMode m = mode != null ? mode : FixtureMode.configuredFor("mariadb");
            String external = System.getenv(URL_VARIABLE);
            List<Resolution.Step<MariaDbServer>> steps = List.of(
                    Resolution.Step.of(FixtureMode.EXTERNAL,
                            () -> external == null || external.isBlank() ? Optional.of(URL_VARIABLE + " is not set") : Optional.empty(),
                            () -> external(external)),
                    Resolution.Step.of(FixtureMode.BINARY, Builder::localProblem, this::local),
                    Resolution.Step.unavailable(FixtureMode.EMBEDDED, "no embedded MariaDB is wired in"),
                    Resolution.Step.unavailable(FixtureMode.CONTAINER, "no MariaDB container is wired in"));
            return Resolution.resolve("mariadb", m, INSTALL_HINT, steps);
        }

        private static String requireWord(String value, String name) {
            Objects.requireNonNull(value, name);
            if (!value.matches("[A-Za-z0-9_]{1,32}")) {
                throw new IllegalArgumentException(name + " must be 1 to 32 letters, digits or '_': " + value);
            }
            return value;
        }

        private MariaDbServer external(String text) {
            ServerUrl u = ServerUrl.parse(URL_VARIABLE, text, 3306);
            String user = u.user() != null ? u.user() : "root";
            return new MariaDbServer(new ExternalServer("mariadb", u.host(), u.port(), URL_VARIABLE,
                    "apt-get install mariadb-server"), user, u.password() != null ? u.password() : "",
                    u.path() != null ? u.path() : DEFAULT_NAME, null);
        }

        // ------------------------------------------------------------------ local binaries

        static Optional<Path> serverBinary() {
            return Commands.findExecutable("mariadbd", "/usr/sbin/mariadbd");
        }

        static Optional<Path> installBinary() {
            return Commands.findExecutable("mariadb-install-db", "/usr/bin/mariadb-install-db");
        }

        static Optional<Path> clientBinary() {
            return Commands.findExecutable("mariadb", "/usr/bin/mariadb");
        }

        private static Optional<String> localProblem() {
            if (Stream.of(serverBinary(), installBinary(), clientBinary()).anyMatch(Optional::isEmpty)) {
                return Optional.of("no MariaDB binaries (mariadbd, mariadb-install-db, mariadb) on the PATH or in /usr/sbin, /usr/bin");
            }
            if (PostgresServer.Builder.runningAsRoot()) {
                if (Commands.findExecutable("setpriv", "/usr/bin/setpriv").isEmpty()) {
                    return Optional.of("this JVM runs as root, mariadbd refuses root and there is no setpriv"
                            + " to drop to the mysql user (apt-get install util-linux)");
                }
                try {
                    Path.of("/").getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(OS_USER);
                } catch (UserPrincipalNotFoundException e) {
                    return Optional.of("this JVM runs as root, mariadbd refuses root and there is no 'mysql'"
                            + " OS user to run it as (apt-get install mariadb-server creates it)");
                } catch (IOException e) {
                    return Optional.of("cannot look up the mysql OS user: " + e);
                }
            }
            return Optional.empty();
        }

        /** Prefix that runs a command as the mysql OS user when this JVM is root, else nothing. */
        private static List<String> asMysql() {
            if (!PostgresServer.Builder.runningAsRoot()) {
                return List.of();
            }
            String setpriv = Commands.findExecutable("setpriv", "/usr/bin/setpriv").orElseThrow().toString();
            return List.of(setpriv, "--reuid=" + OS_USER, "--regid=" + OS_USER, "--init-groups");
        }

        private static void giveToMysql(Path path) throws IOException {
            if (!PostgresServer.Builder.runningAsRoot()) {
                return;
            }
            UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
            UserPrincipal user = users.lookupPrincipalByName(OS_USER);
            GroupPrincipal group = users.lookupPrincipalByGroupName(OS_USER);
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(user);
            view.setGroup(group);
        }

        private static void prepare(ServerProcess.Layout layout) {
            try {
                // the mysql user must reach the data dir and write its socket inside our temp dir
                Files.setPosixFilePermissions(layout.directory(), PosixFilePermissions.fromString("rwxr-xr-x"));
                Path data = Files.createDirectory(layout.path("data"),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                Path run = Files.createDirectory(layout.path("run"));
                // its own temp dir: a MariaDB server deletes every "#sql*" file of its tmpdir when it starts, so with
                // the default /tmp a server starting beside a bootstrap (another suite, a restart fault) removed the
                // bootstrap's temporary tables and the install failed ("Unknown table 'mysql.tmp_user_sys'")
                Path tmp = Files.createDirectory(layout.path("tmp"));
                for (Path p : List.of(data, run, tmp)) {
                    giveToMysql(p);
                }
                List<String> install = new ArrayList<>(asMysql());
                install.addAll(List.of(installBinary().orElseThrow().toString(), "--no-defaults",
                        "--datadir=" + data, "--tmpdir=" + tmp, "--auth-root-authentication-method=normal",
                        "--skip-test-db", "--skip-name-resolve"));
                Commands.Result r = Commands.run(install, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
                if (!r.ok()) {
                    throw new ServerStartException("mariadb-install-db failed (exit " + r.exitCode() + "): "
                            + String.join(" ", install) + "\nlog " + layout.logFile() + " ends with:\n"
                            + Commands.tail(layout.logFile(), 40), null);
                }
            } catch (IOException e) {
                throw new ServerStartException("cannot prepare a MariaDB data dir in " + layout.directory() + ": " + e, e);
            }
        }

        /**
         * The command line of the server (run directly, so its pid is the server's): TCP on the
         * loopback port, its own socket, pid file and temp files in the temp dir, no binary log, a small buffer
         * pool, and the InnoDB log written to the OS at each commit (survives a process kill).
         */
        static List<String> command(ServerProcess.Layout layout) {
            List<String> cmd = new ArrayList<>(asMysql());
            cmd.addAll(List.of(serverBinary().orElseThrow().toString(),
                    "--no-defaults",
                    "--datadir=" + layout.path("data"),
                    "--tmpdir=" + layout.path("tmp"),
                    "--socket=" + layout.path("run/mariadb.sock"),
                    "--pid-file=" + layout.path("run/mariadb.pid"),
                    "--port=" + layout.port(),
                    "--bind-address=" + layout.host(),
                    "--skip-networking=0",
                    "--skip-name-resolve",
                    "--skip-log-bin",
                    "--performance-schema=OFF",
                    "--innodb-buffer-pool-size=32M",
                    "--innodb-log-file-size=16M",
                    "--innodb-flush-log-at-trx-commit=2",
                    "--innodb-doublewrite=0",
                    "--character-set-server=utf8mb4",
                    "--collation-server=utf8mb4_bin",
                    "--max-connections=200"));
            return cmd;
        }

        private void createUserAndDatabase(ServerProcess.Layout layout) {
            // root (no password in a fresh data dir: --auth-root-authentication-method=normal) logs in through the Unix socket
            String sql = "CREATE DATABASE IF NOT EXISTS `" + database + "`;"
                    + " CREATE USER IF NOT EXISTS '" + username + "'@'%' IDENTIFIED BY '" + password + "';"
                    + " GRANT ALL PRIVILEGES ON *.* TO '" + username + "'@'%' WITH GRANT OPTION;";
            List<String> cmd = new ArrayList<>(asMysql());
            cmd.addAll(List.of(clientBinary().orElseThrow().toString(), "--no-defaults",
                    "--socket=" + layout.path("run/mariadb.sock"),
                    "--user=root",
                    "-e", sql));
            Commands.Result r = Commands.run(cmd, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
            if (!r.ok()) {
                throw new ServerStartException("creating the test user and database failed (exit " + r.exitCode() + "): "
                        + String.join(" ", cmd) + "\nlog " + layout.logFile() + " ends with:\n"
                        + Commands.tail(layout.logFile(), 40), null);
            }
        }

        private MariaDbServer local() {
            ServerProcess process = ServerProcess.builder("mariadb")
                    .prepare(Builder::prepare)
                    .command(Builder::command)
                    .readiness(layout -> Probes.mariaDbReady(layout.host(), layout.port()))
                    .afterFirstStart(this::createUserAndDatabase)
                    .startTimeout(startTimeout)
                    .start();
            return new MariaDbServer(process, username, password, database, process.layout().path("run/mariadb.sock"));
        }
    }
}
