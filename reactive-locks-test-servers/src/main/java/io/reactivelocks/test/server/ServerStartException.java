package io.reactivelocks.test.server;

/**
 * A server could not be started or did not become ready in time. The message names the server,
 * the command line and the tail of its log.
 */
public class ServerStartException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with the log tail
     * @param cause   the underlying failure, or null
     */
    public ServerStartException(String message, Throwable cause) {
        super(message, cause);
    }
}
