package io.reactivelocks.cli;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import reactor.core.publisher.Mono;

/** {@code lock NAME [--lease 10s] [--wait 30s] -- command args...}. */
@Command(name = "lock", description = "Runs a command while holding the lock NAME; exits with the command's exit code.",
        mixinStandardHelpOptions = true)
final class LockCommand extends RunUnderLease {

    @Override
    String what() {
        return "lock";
    }

    @Override
    BiFunction<OpenStore, LockOptions, Mono<Lease>> acquire(boolean once) {
        return (open, options) -> once ? open.store().locks(options).tryAcquire(name, options)
                : open.store().locks(options).acquire(name, options);
    }
}
