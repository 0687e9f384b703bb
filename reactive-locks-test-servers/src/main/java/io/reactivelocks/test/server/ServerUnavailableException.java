package io.reactivelocks.test.server;

/**
 * No way to run a server of the wanted kind was found on this machine. The message says exactly
 * what to install (for example {@code apt-get install redis-server}) or which environment variable
 * to set. Tests never skip on this: they fail with this message.
 */
public class ServerUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to install it
     */
    public ServerUnavailableException(String message) {
        super(message);
    }
}
