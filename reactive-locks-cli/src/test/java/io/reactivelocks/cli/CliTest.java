package io.reactivelocks.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.test.server.EtcdServer;
import io.reactivelocks.test.server.MariaDbServer;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.ZooKeeperServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The CLI as operators and scripts run it: separate JVMs on real servers. */
class CliTest {

    private static final Duration RUN = Duration.ofSeconds(40);
    private static final Pattern TOKEN = Pattern.compile("token[ =](\\d+)");

    private static RedisServer redis;

    @TempDir
    Path dir;

    private final List<CliProcess> started = new ArrayList<>();
    private String name;

    @BeforeAll
    static void startRedis(@TempDir Path warmUp) throws Exception {
        redis = RedisServer.start();
        CliProcess.warmUp(warmUp, redis.url()); // the class-data archive of the CLI JVMs the tests start
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @org.junit.jupiter.api.BeforeEach
    void name(TestInfo info) {
        name = "cli-" + info.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    }

    @AfterEach
    void killAll() {
        started.forEach(CliProcess::kill);
    }

    private CliProcess cli(String... args) {
        return cli(Map.of("REACTIVE_LOCKS_STORE", redis.url()), args);
    }

    /**
     * Starts the CLI with {@code env}; unless it says otherwise, the store has 30 s to answer the first time: a cold
     * CLI JVM's first request on a loaded 2-core machine took more than the default 5 s (loaded run s40: etcd, `list`),
     * and what these tests check is not that bound ({@link #badInputIsOneLineNamingTheOptionAndExitCode2} checks the
     * default's message).
     */
    private CliProcess cli(Map<String, String> env, String... args) {
        Map<String, String> withTimeout = new java.util.HashMap<>(env);
        withTimeout.putIfAbsent(StoreUrls.CONNECT_TIMEOUT_ENV, "30s");
        return cliAsGiven(withTimeout, args);
    }

    private CliProcess cliAsGiven(Map<String, String> env, String... args) {
        CliProcess p = CliProcess.start(dir, env, args);
        started.add(p);
        return p;
    }

    private static long token(String text) {
        Matcher m = TOKEN.matcher(text);
        assertThat(m.find()).as("a token in: %s", text).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static void awaitOutput(CliProcess p, String text) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(p.stdout()).as("%s", p).contains(text));
    }

    @Test
    void twoLockProcessesOnOneNameNeverOverlapAndTokensIncrease() {
        Path file = dir.resolve("log");
        String body = "echo start $REACTIVE_LOCKS_TOKEN >> " + file + "; sleep 0.3; echo end >> " + file;
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            workers.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 3; i++) {
                    CliProcess p = cli("lock", name, "--wait", "30s", "--", "sh", "-c", body);
                    assertThat(p.exitCode(RUN)).as("%s", p).isZero();
                }
            }));
        }
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).join();
        List<String> lines = CliProcess.read(file).lines().toList();
        assertThat(lines).hasSize(12);
        long last = Long.MIN_VALUE;
        for (int i = 0; i < lines.size(); i += 2) {
            assertThat(lines.get(i)).as("line %d of %s", i, lines).startsWith("start ");
            assertThat(lines.get(i + 1)).as("line %d of %s", i + 1, lines).isEqualTo("end");
            long token = Long.parseLong(lines.get(i).substring("start ".length()).trim());
            assertThat(token).as("tokens in %s", lines).isGreaterThan(last);
            last = token;
        }
    }

    @Test
    void aKilledHoldersLockIsTakenAfterItsLeaseWithAHigherToken() {
        CliProcess holder = cli("lock", name, "--lease", "2s", "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN; exec sleep 60");
        awaitOutput(holder, "held ");
        long first = token(holder.stdout().replace("held ", "token "));
        holder.kill(); // destroyForcibly: no release, the lease runs out on the server
        long killedAt = System.nanoTime();
        CliProcess next = cli("lock", name, "--wait", "20s", "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN");
        assertThat(next.exitCode(RUN)).as("%s", next).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).isLessThan(Duration.ofSeconds(25));
        assertThat(token(next.stdout().replace("held ", "token "))).isGreaterThan(first);
    }

    @Test
    void releaseForceFromAnotherProcessEvictsTheHolderWhoseCommandIsStopped() {
        CliProcess holder = cli("lock", name, "--lease", "3s", "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN; exec sleep 60");
        awaitOutput(holder, "held ");
        long first = token(holder.stdout().replace("held ", "token "));
        List<ProcessHandle> children = holder.process.descendants().toList();
        assertThat(children).isNotEmpty();

        CliProcess before = cli("list", "cli-release");
        assertThat(before.exitCode(RUN)).as("%s", before).isZero();
        assertThat(before.stdout()).contains(name).contains(Long.toString(first)).contains("holder");

        CliProcess release = cli("release", "--force", name);
        assertThat(release.exitCode(RUN)).as("%s", release).isZero();
        assertThat(release.stdout()).contains("evicted").contains(name).contains(Long.toString(first));

        assertThat(holder.exitCode(Duration.ofSeconds(20))).as("%s", holder).isEqualTo(ExitCodes.LEASE_LOST);
        assertThat(holder.stderr()).contains("lost");
        assertThat(children).noneMatch(ProcessHandle::isAlive);

        CliProcess after = cli("list", "cli-release");
        assertThat(after.exitCode(RUN)).as("%s", after).isZero();
        assertThat(after.stdout()).doesNotContain(name);

        CliProcess next = cli("lock", name, "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN");
        assertThat(next.exitCode(RUN)).as("%s", next).isZero();
        assertThat(token(next.stdout().replace("held ", "token "))).isGreaterThan(first);
    }

    /**
     * The holders' reaction to a request, asked from this JVM's own session until it arrives (a request
     * is not stored, and a holder listens from just after it acquired); the {@code revoke} command
     * itself once, for a held and for a free name — one process each rather than one per attempt.
     */
    @Test
    void revokeStopsTheHoldersCommandAndReleasesUnlessItIgnoresRequests() {
        CliProcess ignoring = cli("lock", name + "-ignoring", "--on-revoke", "ignore", "--", "sh", "-c", "echo held; exec sleep 60");
        CliProcess holder = cli("lock", name, "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN; exec sleep 60");
        awaitOutput(holder, "held ");
        awaitOutput(ignoring, "held");
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
        io.reactivelocks.LockStore operator = io.reactivelocks.redis.RedisLocks.connect(client);
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
                operator.admin().revoke(name, "maintenance").block(Duration.ofSeconds(10));
                return !holder.process.isAlive();
            });
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
                operator.admin().revoke(name + "-ignoring", "please").block(Duration.ofSeconds(10));
                return ignoring.stderr().contains("ignored");
            });
        } finally {
            operator.close().block(Duration.ofSeconds(10));
            client.shutdown();
        }
        assertThat(holder.exitCode(Duration.ofSeconds(20))).as("%s", holder).isEqualTo(ExitCodes.REVOKED);
        assertThat(holder.stderr()).contains("revocation requested", "maintenance");
        assertThat(ignoring.process.isAlive()).as("--on-revoke ignore: the command goes on").isTrue();

        CliProcess ask = cli("revoke", name + "-ignoring", "--reason", "please again");
        assertThat(ask.exitCode(RUN)).as("%s", ask).isZero();
        assertThat(ask.stdout()).contains("asked the holders of " + name + "-ignoring");
        CliProcess free = cli("revoke", name);
        assertThat(free.exitCode(RUN)).as("%s", free).isZero();
        assertThat(free.stdout()).contains("nothing held");
    }

    @Test
    void serveShowsTheDashboardAndStreamsWhatTheStoreHolds() throws Exception {
        CliProcess holder = cli("lock", name, "--", "sh", "-c", "echo held $REACTIVE_LOCKS_TOKEN; exec sleep 60");
        CliProcess serve = cli("serve", "--port", "0", "--prefix", name);
        awaitOutput(holder, "held ");
        long token = token(holder.stdout().replace("held ", "token "));
        awaitOutput(serve, "http://");
        Matcher m = Pattern.compile("(http://\\S+/)").matcher(serve.stdout());
        assertThat(m.find()).as("%s", serve).isTrue();
        String base = m.group(1);
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpResponse<String> page = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base))
                .timeout(Duration.ofSeconds(20)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("const EVENTS_URL = \"events\";", "const RELEASE_URL = null;");
        java.net.http.HttpResponse<java.util.stream.Stream<String>> events = http.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(base + "events")).timeout(Duration.ofSeconds(20)).build(), java.net.http.HttpResponse.BodyHandlers.ofLines());
        try (java.util.stream.Stream<String> lines = events.body()) {
            String first = lines.filter(l -> l.startsWith("data: ")).findFirst().orElseThrow();
            assertThat(first).contains("\"name\":\"" + name + "\"", "\"token\":" + token, "\"role\":\"holder\"");
        }
        java.net.http.HttpResponse<String> refused = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "release?name=" + name))
                .POST(java.net.http.HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(20)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).as("force-release is off unless --write-operations").isEqualTo(403);
    }

    @Test
    void theCommandsExitCodeIsTheClisAndAnEndedWaitIsExitCode3() throws IOException {
        Path stop = dir.resolve("stop");
        CliProcess holder = cli("lock", name, "--", "sh", "-c", "echo held; while [ ! -f " + stop + " ]; do sleep 0.1; done");
        CliProcess seven = cli("lock", name + "-other", "--", "sh", "-c", "exit 7");
        awaitOutput(holder, "held");
        CliProcess waiter = cli("lock", name, "--wait", "1s", "--", "sh", "-c", "echo ran");
        assertThat(waiter.exitCode(RUN)).as("%s", waiter).isEqualTo(ExitCodes.NOT_ACQUIRED);
        assertThat(waiter.stdout()).doesNotContain("ran");
        assertThat(waiter.stderr().strip()).contains(name).contains("--wait").doesNotContain("Exception");
        assertThat(seven.exitCode(RUN)).as("%s", seven).isEqualTo(7);
        Files.writeString(stop, "");
        assertThat(holder.exitCode(RUN)).as("%s", holder).isZero();
    }

    @Test
    void inspectAndWatchShowTheHolderThenFree() throws IOException {
        CliProcess watch = cli("watch", name);
        CliProcess free = cli("inspect", name);
        assertThat(free.exitCode(RUN)).as("%s", free).isZero();
        assertThat(free.stdout().strip()).isEqualTo(name + " free");
        awaitOutput(watch, name + " free");

        Path stop = dir.resolve("stop");
        CliProcess holder = cli("lock", name, "--", "sh", "-c", "echo acquired; while [ ! -f " + stop + " ]; do sleep 0.1; done");
        awaitOutput(holder, "acquired");
        CliProcess held = cli("inspect", name);
        assertThat(held.exitCode(RUN)).as("%s", held).isZero();
        assertThat(held.stdout()).contains(name + " held token=").contains("owner=");
        Files.writeString(stop, "");
        assertThat(holder.exitCode(RUN)).as("%s", holder).isZero();

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<String> lines = watch.stdout().lines().toList();
            int heldAt = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(name + " held token=")) {
                    heldAt = i;
                }
            }
            assertThat(heldAt).as("a held line in %s", lines).isPositive();
            assertThat(lines.subList(heldAt + 1, lines.size())).as("%s", lines).anyMatch(l -> l.endsWith(name + " free"));
        });
        assertThat(watch.process.isAlive()).isTrue();
    }

    @Test
    void aSemaphoreOfTwoPermitsRunsAtMostTwoCommandsAtOnce() {
        Path file = dir.resolve("log");
        String body = "echo start $REACTIVE_LOCKS_TOKEN >> " + file + "; sleep 1; echo end $REACTIVE_LOCKS_TOKEN >> " + file;
        List<CliProcess> ps = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ps.add(cli("semaphore", name, "--permits", "2", "--wait", "30s", "--", "sh", "-c", body));
        }
        for (CliProcess p : ps) {
            assertThat(p.exitCode(RUN)).as("%s", p).isZero();
        }
        List<String> lines = CliProcess.read(file).lines().toList();
        assertThat(lines).hasSize(6);
        int running = 0;
        int most = 0;
        for (String line : lines) {
            running += line.startsWith("start ") ? 1 : -1;
            most = Math.max(most, running);
        }
        assertThat(most).as("%s", lines).isBetween(1, 2);
        assertThat(lines.stream().filter(l -> l.startsWith("start ")).map(l -> l.substring(6)).distinct()).hasSize(3);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"postgresql", "mariadb", "etcd", "zookeeper"})
    void lockRunsTheCommandWithTheTokenAndListShowsItOn(String kind) throws IOException {
        ServerFixture server = switch (kind) {
            case "postgresql" -> PostgresServer.start();
            case "mariadb" -> MariaDbServer.start();
            case "etcd" -> EtcdServer.start();
            default -> ZooKeeperServer.start();
        };
        try (server) {
            String url = server instanceof PostgresServer pg ? pg.url() : server instanceof MariaDbServer maria ? maria.url()
                    : kind + "://" + server.host() + ":" + server.port();
            Path stop = dir.resolve("stop");
            CliProcess p = cli(Map.of(), "--store", url, "lock", name, "--", "sh", "-c",
                    "echo token $REACTIVE_LOCKS_TOKEN; while [ ! -f " + stop + " ]; do sleep 0.1; done");
            awaitOutput(p, "token ");
            long token = token(p.stdout());
            CliProcess list = cli(Map.of("REACTIVE_LOCKS_STORE", url), "list", "--json", name);
            assertThat(list.exitCode(RUN)).as("%s", list).isZero();
            assertThat(list.stdout()).as("%s", list).contains("\"name\":\"" + name + "\"").contains("\"token\":" + token + ",");
            Files.writeString(stop, "");
            assertThat(p.exitCode(RUN)).as("%s", p).isZero();
        }
    }

    @Test
    void badInputIsOneLineNamingTheOptionAndExitCode2() {
        CliProcess scheme = cli(Map.of(), "--store", "mongodb://localhost:27017", "lock", name, "--", "true");
        CliProcess duration = cli("lock", name, "--lease", "ten", "--", "true");
        CliProcess noStore = cli(Map.of(), "lock", name, "--", "true");
        CliProcess noName = cli("inspect");
        CliProcess down = cliAsGiven(Map.of(), "--store", "redis://127.0.0.1:1", "inspect", name);
        CliProcess badTimeout = cli(Map.of(StoreUrls.CONNECT_TIMEOUT_ENV, "soon"), "--store", "redis://127.0.0.1:1", "inspect", name);
        assertBadInput(scheme, "--store");
        assertBadInput(duration, "--lease");
        assertBadInput(noStore, "--store");
        assertBadInput(noName, "NAME");
        assertBadInput(badTimeout, StoreUrls.CONNECT_TIMEOUT_ENV);
        assertThat(down.exitCode(RUN)).as("%s", down).isEqualTo(ExitCodes.STORE_UNAVAILABLE);
        assertThat(down.stderr().strip()).startsWith("reactive-locks: redis at 127.0.0.1:1 did not answer within 5 s")
                .doesNotContain("\n");
    }

    private static void assertBadInput(CliProcess p, String option) {
        assertThat(p.exitCode(RUN)).as("%s", p).isEqualTo(ExitCodes.BAD_INPUT);
        String err = p.stderr().strip();
        assertThat(err).as("%s", p).contains(option).doesNotContain("\n").doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(p.stdout()).isEmpty();
    }
}
