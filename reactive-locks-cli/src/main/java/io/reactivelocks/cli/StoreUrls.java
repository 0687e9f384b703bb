package io.reactivelocks.cli;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import reactor.core.publisher.Mono;

/**
 * Store URLs to store sessions: {@code redis://[user:password@]host[:port][/db]},
 * {@code postgresql://user:password@host[:port]/database}, {@code mariadb://user:password@host[:port]/database}
 * (or {@code mysql://}), {@code etcd://[user:password@]host[:port]},
 * {@code zookeeper://[user:password@]host[:port]} and {@code memory}. Credentials not in the URL come
 * from {@code REACTIVE_LOCKS_USER} and {@code REACTIVE_LOCKS_PASSWORD}. Opening checks that the
 * server answers within {@link #CONNECT_TIMEOUT} (or {@code REACTIVE_LOCKS_CONNECT_TIMEOUT}).
 */
final class StoreUrls {

    /** How long a store has to answer the first time, unless {@code REACTIVE_LOCKS_CONNECT_TIMEOUT} says otherwise. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** The environment variable that sets how long a store has to answer the first time (e.g. {@code 30s}). */
    static final String CONNECT_TIMEOUT_ENV = "REACTIVE_LOCKS_CONNECT_TIMEOUT";

    static final String USAGE = "use redis://host:port, postgresql://user:password@host:port/database, "
            + "mariadb://user:password@host:port/database, etcd://host:port, zookeeper://host:port or memory";

    private static final Map<String, Integer> DEFAULT_PORTS = Map.of(
            "redis", 6379, "postgresql", 5432, "mariadb", 3306, "etcd", 2379, "zookeeper", 2181);

    private StoreUrls() {
    }

    /** A parsed store URL. */
    record StoreUrl(String kind, String host, int port, String user, String password, String path, Duration connectTimeout) {

        /** @return how messages name the store, e.g. {@code redis at localhost:6379} */
        String label() {
            return kind.equals("memory") ? "the in-memory store" : kind + " at " + host + ":" + port;
        }
    }

    /**
     * @param url the {@code --store} value
     * @param env the environment (credentials)
     * @return the parsed URL
     * @throws CliException (bad input) naming {@code --store} when the URL is malformed or its scheme unknown
     */
    static StoreUrl parse(String url, Map<String, String> env) {
        String text = url.trim();
        if (text.equals("memory")) {
            return new StoreUrl("memory", "", 0, null, null, "", connectTimeout(env));
        }
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw CliException.badInput("--store: malformed URL '" + url + "' (" + e.getReason() + "); " + USAGE);
        }
        String scheme = uri.getScheme();
        if (scheme == null) {
            throw CliException.badInput("--store: '" + url + "' has no scheme; " + USAGE);
        }
        String kind = switch (scheme.toLowerCase(java.util.Locale.ROOT)) {
            case "redis" -> "redis";
            case "postgresql", "postgres" -> "postgresql";
            case "mariadb", "mysql" -> "mariadb";
            case "etcd" -> "etcd";
            case "zookeeper", "zk" -> "zookeeper";
            default -> throw CliException.badInput("--store: unknown scheme '" + scheme + "' in '" + url + "'; " + USAGE);
        };
        if (uri.getHost() == null) {
            throw CliException.badInput("--store: no host in '" + url + "'; " + USAGE);
        }
        int port = uri.getPort() < 0 ? DEFAULT_PORTS.get(kind) : uri.getPort();
        String user = null;
        String password = null;
        String info = uri.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
            if (user.isEmpty()) {
                user = null;
            }
        }
        if (user == null) {
            user = blankToNull(env.get("REACTIVE_LOCKS_USER"));
        }
        if (password == null) {
            password = blankToNull(env.get("REACTIVE_LOCKS_PASSWORD"));
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if ((kind.equals("postgresql") || kind.equals("mariadb")) && (path.isEmpty() || path.equals("/"))) {
            throw CliException.badInput("--store: no database in '" + url + "'; use " + scheme + "://user:password@host:port/database");
        }
        return new StoreUrl(kind, uri.getHost(), port, user, password, path, connectTimeout(env));
    }

    /**
     * @param env the environment
     * @return {@code REACTIVE_LOCKS_CONNECT_TIMEOUT} when set (a positive duration), else {@link #CONNECT_TIMEOUT}
     * @throws CliException (bad input) naming the variable when its value is not a positive duration
     */
    private static Duration connectTimeout(Map<String, String> env) {
        String v = blankToNull(env.get(CONNECT_TIMEOUT_ENV));
        if (v == null) {
            return CONNECT_TIMEOUT;
        }
        Duration d;
        try {
            d = Durations.parse(v);
        } catch (RuntimeException e) {
            throw CliException.badInput(CONNECT_TIMEOUT_ENV + ": '" + v + "' is not a duration (e.g. 30s)");
        }
        if (d.isZero()) {
            throw CliException.badInput(CONNECT_TIMEOUT_ENV + ": '" + v + "' must be longer than zero");
        }
        return d;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Connects and checks that the store answers.
     *
     * @param url   the parsed URL
     * @param lease the lease time of the locks taken (ZooKeeper: the session timeout)
     * @return the open store
     * @throws CliException (store unavailable) when the store does not answer within {@link #CONNECT_TIMEOUT}
     */
    static OpenStore open(StoreUrl url, Duration lease) {
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            LockStore store = switch (url.kind()) {
                case "memory" -> LocalLocks.open();
                case "redis" -> redis(url, resources);
                case "postgresql" -> sql(url, "postgresql");
                case "mariadb" -> sql(url, "mariadb");
                case "etcd" -> etcd(url, resources);
                default -> zookeeper(url, lease, resources);
            };
            return new OpenStore(store, url.label(), resources);
        } catch (RuntimeException e) {
            OpenStore.closeAll(resources);
            if (e instanceof CliException) {
                throw e;
            }
            throw unavailable(url, e);
        }
    }

    static CliException unavailable(StoreUrl url, Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String why = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        if (why.contains("Connection refused")) {
            why = "connection refused";
        }
        boolean noAnswer = root instanceof java.net.ConnectException || root instanceof java.util.concurrent.TimeoutException
                || root instanceof java.io.IOException || root.getClass().getName().contains("Timeout")
                || root.getClass().getName().contains("Connect") || root.getClass().getName().contains("Unavailable")
                || why.contains("Connection refused") || why.contains("UNAVAILABLE");
        return new CliException(ExitCodes.STORE_UNAVAILABLE, url.label()
                + (noAnswer ? " did not answer within " + url.connectTimeout().toSeconds() + " s (" + oneLine(why) + ")" : ": " + oneLine(why)));
    }

    private static String oneLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static LockStore redis(StoreUrl url, List<AutoCloseable> resources) {
        RedisURI.Builder b = RedisURI.builder().withHost(url.host()).withPort(url.port()).withTimeout(url.connectTimeout());
        if (url.password() != null) {
            if (url.user() != null) {
                b.withAuthentication(url.user(), url.password().toCharArray());
            } else {
                b.withPassword(url.password().toCharArray());
            }
        }
        String db = url.path().replace("/", "");
        if (!db.isEmpty()) {
            try {
                b.withDatabase(Integer.parseInt(db));
            } catch (NumberFormatException e) {
                throw CliException.badInput("--store: the Redis database '" + db + "' is not a number");
            }
        }
        RedisClient client = RedisClient.create(b.build());
        resources.add(() -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        client.setOptions(ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(url.connectTimeout()).build()).build());
        try (StatefulRedisConnection<String, String> probe = client.connect()) {
            probe.sync().ping();
        }
        return RedisLocks.connect(client);
    }

    /** @param driver the R2DBC driver: {@code postgresql} or {@code mariadb} */
    private static LockStore sql(StoreUrl url, String driver) {
        String credentials = url.user() == null ? "" : encode(url.user()) + (url.password() == null ? "" : ":" + encode(url.password())) + "@";
        String r2dbc = "r2dbc:" + driver + "://" + credentials + url.host() + ":" + url.port() + url.path()
                + "?connectTimeout=" + url.connectTimeout();
        ConnectionFactory factory = ConnectionFactories.get(r2dbc);
        Mono.from(factory.create()).flatMap(c -> Mono.from(c.close())).timeout(url.connectTimeout())
                .block(url.connectTimeout().plusSeconds(1));
        return driver.equals("mariadb") ? MariaDbLocks.connect(factory) : PostgresLocks.connect(factory);
    }

    private static LockStore etcd(StoreUrl url, List<AutoCloseable> resources) {
        ClientBuilder b = Client.builder().endpoints("http://" + url.host() + ":" + url.port()).connectTimeout(url.connectTimeout());
        if (url.user() != null && url.password() != null) {
            b.user(ByteSequence.from(url.user(), StandardCharsets.UTF_8))
                    .password(ByteSequence.from(url.password(), StandardCharsets.UTF_8));
        }
        Client client = b.build();
        resources.add(client);
        try {
            client.getKVClient().get(ByteSequence.from("reactive-locks-cli/probe", StandardCharsets.UTF_8))
                    .get(url.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException(e);
        }
        return EtcdLocks.connect(client);
    }

    private static LockStore zookeeper(StoreUrl url, Duration lease, List<AutoCloseable> resources) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(url.host() + ":" + url.port())
                .sessionTimeoutMs((int) Math.min(Integer.MAX_VALUE, lease.toMillis()))
                .connectionTimeoutMs((int) url.connectTimeout().toMillis())
                .retryPolicy(new RetryNTimes(3, 200));
        if (url.user() != null && url.password() != null) {
            b.authorization("digest", (url.user() + ":" + url.password()).getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = b.build();
        resources.add(client);
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected((int) url.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            connected = false;
        }
        if (!connected) {
            throw new CliException(ExitCodes.STORE_UNAVAILABLE, url.label() + " did not answer within "
                    + url.connectTimeout().toSeconds() + " s");
        }
        return ZooKeeperLocks.connect(client);
    }
}
