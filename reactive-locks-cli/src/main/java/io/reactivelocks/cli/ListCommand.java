package io.reactivelocks.cli;

import io.reactivelocks.admin.HeldGrant;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code list [PREFIX] [--json]}. */
@Command(name = "list", description = "Lists every grant held under a name prefix, by every client of the store.",
        mixinStandardHelpOptions = true)
final class ListCommand extends StoreCommand {

    @Parameters(index = "0", arity = "0..1", paramLabel = "PREFIX", defaultValue = "",
            description = "The start of the names to list (literally; default: every name).")
    String prefix;

    @Option(names = "--json", description = "One JSON object per line instead of a table.")
    boolean json;

    @Override
    public Integer call() {
        StoreUrls.StoreUrl url = storeUrl();
        try (OpenStore open = StoreUrls.open(url, DEFAULT_LEASE)) {
            List<HeldGrant> grants = Admin.call(url, () -> open.store().admin().list(prefix).collectList().block(Duration.ofSeconds(60)));
            if (json) {
                grants.forEach(g -> System.out.println(Format.json(g)));
            } else if (grants.isEmpty()) {
                System.err.println("reactive-locks: nothing held" + (prefix.isEmpty() ? "" : " under '" + prefix + "'"));
            } else {
                Format.table(grants).forEach(System.out::println);
            }
            return ExitCodes.OK;
        }
    }
}
