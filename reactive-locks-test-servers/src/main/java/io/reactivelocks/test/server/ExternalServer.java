package io.reactivelocks.test.server;

/** A running server named by an environment variable: usable, but not a child process to hurt. */
final class ExternalServer implements ServerHandle {

    private final String name;
    private final String host;
    private final int port;
    private final String variable;
    private final String installHint;

    ExternalServer(String name, String host, int port, String variable, String installHint) {
        this.name = name;
        this.host = host;
        this.port = port;
        this.variable = variable;
        this.installHint = installHint;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public ServerOrigin origin() {
        return ServerOrigin.EXTERNAL;
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

    @Override
    public void kill() {
        throw unsupported("kill()");
    }

    @Override
    public void restart() {
        throw unsupported("restart()");
    }

    /** Leaves the external server alone. */
    @Override
    public void close() {
        // not ours to stop
    }

    private UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException(name + " at " + host + ":" + port + " comes from " + variable
                + " and is not a child process of this JVM, so " + what + " cannot work: fault tests need a child"
                + " process. Unset " + variable + " and install the server locally (" + installHint + ").");
    }

    @Override
    public String toString() {
        return "ExternalServer[" + name + " " + host + ":" + port + " from " + variable + "]";
    }
}
