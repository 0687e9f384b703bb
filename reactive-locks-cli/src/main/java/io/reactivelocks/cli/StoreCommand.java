package io.reactivelocks.cli;

import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** What every command shares: {@code --store}, given before or after the command's name. */
abstract class StoreCommand implements Callable<Integer> {

    /** The lease time when a command takes none. */
    static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);

    @ParentCommand
    Main main;

    @Option(names = "--store", paramLabel = "URL",
            description = "The store: redis://host:port, postgresql://user:password@host:port/database, mariadb://user:password@host:port/database, etcd://host:port, "
                    + "zookeeper://host:port (or env REACTIVE_LOCKS_STORE). Credentials may also come from "
                    + "REACTIVE_LOCKS_USER and REACTIVE_LOCKS_PASSWORD.")
    String store;

    /** @return the parsed {@code --store} (here, before the command, or from the environment) */
    StoreUrls.StoreUrl storeUrl() {
        String url = store != null ? store : main != null && main.store != null ? main.store : System.getenv("REACTIVE_LOCKS_STORE");
        if (url == null || url.isBlank()) {
            throw CliException.badInput("--store URL is required (or env REACTIVE_LOCKS_STORE): every process must use the same store,"
                    + " e.g. redis://localhost:6379; 'memory' lives and dies with this one process");
        }
        return StoreUrls.parse(url, System.getenv());
    }

    /**
     * @param lease the lease time of the locks taken (ZooKeeper's session timeout)
     * @return the connected store, checked to answer
     */
    OpenStore openStore(Duration lease) {
        return StoreUrls.open(storeUrl(), lease);
    }

    /**
     * @param name a lock name from the command line
     * @return it, checked
     */
    static String checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw CliException.badInput("NAME must not be empty");
        }
        return name;
    }
}
