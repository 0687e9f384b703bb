package io.reactivelocks.test.server;

/**
 * A running server that a test talks to and, when it is a child process of this JVM, hurts:
 * {@link #pause()}, {@link #resume()}, {@link #kill()} and {@link #restart()}. Handles of servers
 * that are not child processes (an external server named by an environment variable, an in-JVM
 * server) throw {@link UnsupportedOperationException} from the fault methods they cannot honour,
 * with a message saying what fault tests need.
 */
public interface ServerHandle extends AutoCloseable {

    /** @return the kind of server, for messages: {@code redis}, {@code postgres}, {@code etcd}, {@code zookeeper} */
    String name();

    /** @return the host clients connect to (a loopback address for child processes) */
    String host();

    /** @return the port clients connect to; stays the same across {@link #restart()} */
    int port();

    /** @return where this server comes from in the resolution chain */
    ServerOrigin origin();

    /**
     * Tells whether {@link #pause()}, {@link #resume()}, {@link #kill()} and {@link #restart()} all work.
     *
     * @return true when every fault method is supported (a child process of this JVM)
     */
    boolean supportsFaults();

    /**
     * The operating-system process id of the server.
     *
     * @return the pid of the server process
     * @throws UnsupportedOperationException when the server is not a process this JVM knows
     */
    long pid();

    /**
     * Freezes the server (SIGSTOP to the process and its descendants): connections stay open and
     * every request hangs until {@link #resume()}.
     *
     * @throws UnsupportedOperationException when the server cannot be paused from here
     */
    void pause();

    /**
     * Unfreezes a paused server (SIGCONT); a no-op when it is not paused.
     *
     * @throws UnsupportedOperationException when the server cannot be paused from here
     */
    void resume();

    /**
     * Crashes the server (SIGKILL to the process tree) and waits, bounded, until it has exited;
     * its data dir is kept so {@link #restart()} can bring it back.
     *
     * @throws UnsupportedOperationException when the server cannot be killed from here
     */
    void kill();

    /**
     * Starts the server again on the same port and data dir (killing it first if it still runs)
     * and waits, bounded, until it accepts requests.
     *
     * @throws UnsupportedOperationException when the server cannot be restarted from here
     * @throws ServerStartException when it does not come back in time
     */
    void restart();

    /** Stops the server for good (kills the process tree) and deletes its temp dir; idempotent. */
    @Override
    void close();
}
