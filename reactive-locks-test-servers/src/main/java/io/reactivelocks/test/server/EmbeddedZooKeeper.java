package io.reactivelocks.test.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * ZooKeeper inside this JVM through Curator's {@link TestingServer} (optional dependency
 * {@code org.apache.curator:curator-test}). Only loaded when that class is on the class path.
 * {@link #kill()} stops the server and {@link #restart()} starts it on the same port and data dir;
 * pausing an in-JVM server is impossible.
 */
final class EmbeddedZooKeeper implements ServerHandle {

    static final String CLASS_NAME = "org.apache.curator.test.TestingServer";

    private final TestingServer server;
    private final Path directory;

    private EmbeddedZooKeeper(TestingServer server, Path directory) {
        this.server = server;
        this.directory = directory;
    }

    /** Starts an in-JVM ZooKeeper on a free loopback port with four-letter words enabled. */
    static ServerHandle start(int tickTimeMillis) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("reactive-locks-zookeeper-embedded-");
            int port = Loopback.freePorts(1).get(0);
            InstanceSpec spec = new InstanceSpec(dir.toFile(), port, -1, -1, true, -1, tickTimeMillis, -1,
                    Map.of("4lw.commands.whitelist", "*", "admin.enableServer", "false"), Loopback.HOST);
            return new EmbeddedZooKeeper(new TestingServer(spec, true), dir);
        } catch (Exception e) {
            Commands.deleteTree(dir);
            throw new ServerStartException("cannot start an embedded ZooKeeper (Curator TestingServer): " + e, e);
        }
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    @Override
    public String host() {
        return Loopback.HOST;
    }

    @Override
    public int port() {
        return server.getPort();
    }

    @Override
    public ServerOrigin origin() {
        return ServerOrigin.EMBEDDED;
    }

    @Override
    public boolean supportsFaults() {
        return false;
    }

    @Override
    public long pid() {
        throw unsupported("pid()");
    }

    @Override
    public void pause() {
        throw unsupported("pause()");
    }

    @Override
    public void resume() {
        throw unsupported("resume()");
    }

    /** Stops the in-JVM server; its data dir is kept for {@link #restart()}. */
    @Override
    public void kill() {
        try {
            server.stop();
        } catch (IOException e) {
            throw new IllegalStateException("cannot stop the embedded ZooKeeper: " + e, e);
        }
    }

    /** Starts the in-JVM server again on the same port and data dir. */
    @Override
    public void restart() {
        try {
            server.restart();
        } catch (Exception e) {
            throw new ServerStartException("cannot restart the embedded ZooKeeper: " + e, e);
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // best effort
        } finally {
            Commands.deleteTree(directory);
        }
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException("the embedded ZooKeeper runs inside this JVM, so " + what
                + " cannot work: fault tests that pause the server need a child process. Install the zookeeper"
                + " package (" + ZooKeeperServer.INSTALL_COMMAND + ") and do not force fixture mode 'embedded'.");
    }

    @Override
    public String toString() {
        return "EmbeddedZooKeeper[" + server.getConnectString() + "]";
    }
}
