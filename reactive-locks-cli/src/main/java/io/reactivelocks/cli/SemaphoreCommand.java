package io.reactivelocks.cli;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import reactor.core.publisher.Mono;

/** {@code semaphore NAME --permits N [--lease 10s] [--wait 30s] -- command args...}. */
@Command(name = "semaphore", description = "Runs a command while holding one of N permits of NAME; exits with the command's exit code.",
        mixinStandardHelpOptions = true)
final class SemaphoreCommand extends RunUnderLease {

    @Option(names = "--permits", paramLabel = "N", required = true, description = "N: at most N holders of NAME at once.")
    int permits;

    @Override
    String what() {
        return "semaphore";
    }

    @Override
    void validate() {
        if (permits < 1) {
            throw CliException.badInput("--permits must be at least 1, was " + permits);
        }
    }

    @Override
    BiFunction<OpenStore, LockOptions, Mono<Lease>> acquire(boolean once) {
        return (open, options) -> once ? open.store().semaphores(options).tryAcquire(name, permits, options)
                : open.store().semaphores(options).acquire(name, permits, options);
    }
}
