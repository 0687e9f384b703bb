package io.reactivelocks.cli;

/** A failure the CLI reports as one line on stderr and an exit code, without a stack trace. */
final class CliException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }

    static CliException badInput(String message) {
        return new CliException(ExitCodes.BAD_INPUT, message);
    }
}
