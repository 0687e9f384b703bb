package io.reactivelocks.cli;

import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code revoke NAME [--reason TEXT]}. */
@Command(name = "revoke", description = "Asks the holders of NAME (lock, permits, readers, writer) to let go (cooperative: a lock or semaphore command stops its command"
        + " and releases, unless --on-revoke ignore; release --force evicts a holder that does not let go).",
        mixinStandardHelpOptions = true)
final class RevokeCommand extends StoreCommand {

    @Parameters(index = "0", paramLabel = "NAME", description = "The name whose holders are asked.")
    String name;

    @Option(names = "--reason", paramLabel = "TEXT", defaultValue = "requested by an operator",
            description = "Why, shown to the holder (default: ${DEFAULT-VALUE}).")
    String reason;

    @Override
    public Integer call() {
        checkName(name);
        if (reason.length() > io.reactivelocks.admin.LockAdmin.MAX_REASON_LENGTH) {
            throw CliException.badInput("--reason must be at most " + io.reactivelocks.admin.LockAdmin.MAX_REASON_LENGTH + " characters");
        }
        StoreUrls.StoreUrl url = storeUrl();
        try (OpenStore open = StoreUrls.open(url, DEFAULT_LEASE)) {
            Boolean asked = Admin.call(url, () -> open.store().admin().revoke(name, reason).block(Duration.ofSeconds(60)));
            System.out.println(Boolean.TRUE.equals(asked) ? "asked the holders of " + name + " to let go: " + reason
                    : "nothing held on " + name);
            return ExitCodes.OK;
        }
    }
}
