package io.reactivelocks.cli;

import io.reactivelocks.LockState;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code inspect NAME}. */
@Command(name = "inspect", description = "Prints the lock's state: free, or held with token, remaining lease, owner and payload.",
        mixinStandardHelpOptions = true)
final class InspectCommand extends StoreCommand {

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Override
    public Integer call() {
        checkName(name);
        StoreUrls.StoreUrl url = storeUrl();
        try (OpenStore open = StoreUrls.open(url, DEFAULT_LEASE)) {
            LockState state = Admin.call(url, () -> open.store().locks().inspect(name).block(Duration.ofSeconds(60)));
            System.out.println(Format.state(state));
            return ExitCodes.OK;
        }
    }
}
