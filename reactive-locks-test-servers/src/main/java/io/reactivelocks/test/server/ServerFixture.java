package io.reactivelocks.test.server;

import java.util.Objects;

/**
 * Common base of the server fixtures ({@link RedisServer}, {@link PostgresServer},
 * {@link EtcdServer}, {@link ZooKeeperServer}, {@link MariaDbServer}): it forwards the {@link ServerHandle} methods to the
 * server the resolution chain found, so a test treats every origin alike and only fault methods
 * differ (see {@link #supportsFaults()}).
 */
public abstract class ServerFixture implements ServerHandle {

    private final ServerHandle server;

    /**
     * Wraps a resolved server.
     *
     * @param server the running server
     */
    protected ServerFixture(ServerHandle server) {
        this.server = Objects.requireNonNull(server, "server");
    }

    /** @return the underlying handle (a {@link ServerProcess} for {@link ServerOrigin#LOCAL_BINARY}) */
    public ServerHandle server() {
        return server;
    }

    @Override
    public String name() {
        return server.name();
    }

    @Override
    public String host() {
        return server.host();
    }

    @Override
    public int port() {
        return server.port();
    }

    @Override
    public ServerOrigin origin() {
        return server.origin();
    }

    @Override
    public boolean supportsFaults() {
        return server.supportsFaults();
    }

    @Override
    public long pid() {
        return server.pid();
    }

    @Override
    public void pause() {
        server.pause();
    }

    @Override
    public void resume() {
        server.resume();
    }

    @Override
    public void kill() {
        server.kill();
    }

    @Override
    public void restart() {
        server.restart();
    }

    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + server + "]";
    }
}
