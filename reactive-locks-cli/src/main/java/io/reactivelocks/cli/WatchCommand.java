package io.reactivelocks.cli;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code watch NAME}: one line per change until Ctrl-C. */
@Command(name = "watch", description = "Prints the lock's state, then a line per change (acquired, handed over, released, expired) until Ctrl-C.",
        mixinStandardHelpOptions = true)
final class WatchCommand extends StoreCommand {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Override
    public Integer call() {
        checkName(name);
        StoreUrls.StoreUrl url = storeUrl();
        OpenStore open = StoreUrls.open(url, DEFAULT_LEASE);
        Thread hook = new Thread(open::close, "reactive-locks-cli-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Admin.call(url, () -> open.store().locks().observe(name)
                    .doOnNext(s -> System.out.println(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " " + Format.state(s)))
                    .blockLast());
            return ExitCodes.OK;
        } finally {
            open.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already (Ctrl-C): the hook runs
            }
        }
    }
}
