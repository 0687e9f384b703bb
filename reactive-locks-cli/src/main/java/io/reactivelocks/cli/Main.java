package io.reactivelocks.cli;

import java.io.PrintWriter;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code reactive-locks}: run a command under a distributed lock or semaphore permit, list what is
 * held on a store, inspect and watch a lock, force-release a name. See {@code docs/cli.md}.
 *
 * <pre>
 * reactive-locks --store redis://localhost:6379 lock nightly-report --lease 10s --wait 30s -- ./report.sh
 * reactive-locks --store redis://localhost:6379 list report
 * reactive-locks --store redis://localhost:6379 release --force nightly-report
 * </pre>
 *
 * <p>Exit codes: the command's own (lock, semaphore), 0 done, 1 unexpected failure, 2 bad input,
 * 3 not acquired within {@code --wait}, 4 lease lost (the command was stopped), 5 the store did not
 * answer.
 */
@Command(name = "reactive-locks", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Distributed locks from the shell: run a command under a lock, see and take back what is held.",
        subcommands = {LockCommand.class, SemaphoreCommand.class, ListCommand.class, InspectCommand.class,
            WatchCommand.class, ReleaseCommand.class, RevokeCommand.class, ServeCommand.class},
        footer = {"", "Exit codes: the command's own (lock, semaphore); 0 done; 1 failed; 2 bad input;",
            "3 not acquired within --wait; 4 lease lost, command stopped; 5 store did not answer;",
            "6 revocation requested (revoke), command stopped and lock released."})
public final class Main implements Runnable {

    static {
        // before anything logs: the CLI prints its own lines, the drivers only warnings and errors
        quietLogs();
    }

    @Option(names = "--store", paramLabel = "URL",
            description = "The store: redis://host:port, postgresql://user:password@host:port/database, mariadb://user:password@host:port/database, etcd://host:port, "
                    + "zookeeper://host:port (or env REACTIVE_LOCKS_STORE).")
    String store;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Picocli instantiates it. */
    public Main() {
    }

    /**
     * Runs the command line and exits with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * Runs the command line.
     *
     * @param args the command line
     * @return the exit code
     */
    static int run(String... args) {
        CommandLine cl = new CommandLine(new Main());
        cl.setParameterExceptionHandler((ex, a) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println("reactive-locks: " + firstLine(ex.getMessage()));
            err.flush();
            return ExitCodes.BAD_INPUT;
        });
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            PrintWriter err = cmd.getErr();
            if (ex instanceof CliException c) {
                err.println("reactive-locks: " + firstLine(c.getMessage()));
                err.flush();
                return c.exitCode();
            }
            err.println("reactive-locks: " + firstLine(ex.getClass().getSimpleName() + ": " + ex.getMessage()));
            err.flush();
            return ExitCodes.FAILED;
        });
        return cl.execute(args);
    }

    @Override
    public void run() {
        throw CliException.badInput("missing a command: lock, semaphore, list, inspect, watch or release (see --help)");
    }

    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return (nl < 0 ? s : s.substring(0, nl)).trim();
    }

    /** The version in the jar's manifest ({@code Implementation-Version}). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"reactive-locks-cli " + (v == null ? "(development build)" : v)};
        }
    }

    private static void quietLogs() {
        setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setIfAbsent("org.slf4j.simpleLogger.logFile", "System.err");
        setIfAbsent("org.slf4j.simpleLogger.showThreadName", "false");
        // gRPC (etcd) and anything else on java.util.logging
        Logger.getLogger("").setLevel(Level.WARNING);
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
