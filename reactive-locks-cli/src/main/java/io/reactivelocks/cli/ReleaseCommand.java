package io.reactivelocks.cli;

import io.reactivelocks.admin.HeldGrant;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code release --force NAME}. */
@Command(name = "release", description = "With --force, evicts every holder of NAME (lock holder, permits, readers, writer).",
        mixinStandardHelpOptions = true)
final class ReleaseCommand extends StoreCommand {

    @Parameters(index = "0", paramLabel = "NAME", description = "The name to free.")
    String name;

    @Option(names = "--force", description = "Evict the holders: their leases are lost (tokens go on, so the next holder is fenced above them).")
    boolean force;

    @Override
    public Integer call() {
        checkName(name);
        if (!force) {
            throw CliException.badInput("release needs --force: a lock is released by its holder (the lock command releases when its"
                    + " command ends); --force evicts every holder of " + name + ", whose leases are lost");
        }
        StoreUrls.StoreUrl url = storeUrl();
        try (OpenStore open = StoreUrls.open(url, DEFAULT_LEASE)) {
            List<HeldGrant> evicted = Admin.call(url, () -> open.store().admin().forceRelease(name).block(Duration.ofSeconds(60)));
            if (evicted == null || evicted.isEmpty()) {
                System.out.println("nothing held on " + name);
            } else {
                evicted.forEach(g -> System.out.println("evicted " + Format.grant(g)));
            }
            return ExitCodes.OK;
        }
    }
}
