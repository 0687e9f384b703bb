package io.reactivelocks.cli;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import reactor.core.publisher.Mono;

/**
 * Acquires a lease, runs the command as a child process while the lease is held (renewed by the
 * library), stops the child when the lease is lost, releases at the end and on Ctrl-C.
 */
abstract class RunUnderLease extends StoreCommand {

    /** How long a stopped child has between SIGTERM and SIGKILL. */
    static final Duration GRACE = Duration.ofSeconds(5);

    @Parameters(index = "0", paramLabel = "NAME", description = "The name to hold.")
    String name;

    @Parameters(index = "1..*", paramLabel = "COMMAND", arity = "0..*",
            description = "The command to run while holding it, after --; its environment gets "
                    + "REACTIVE_LOCKS_NAME and REACTIVE_LOCKS_TOKEN (the fencing token).")
    List<String> command;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "10s", converter = Durations.class,
            description = "The lease time, renewed while the command runs (default ${DEFAULT-VALUE}).")
    Duration lease;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "How long to wait for it (default ${DEFAULT-VALUE}; 0 = one attempt); exit code 3 after.")
    Duration wait;

    @Option(names = "--on-revoke", paramLabel = "stop|ignore", defaultValue = "stop",
            description = "What an operator's revocation request (reactive-locks revoke NAME) does: stop the command and "
                    + "release (exit code 6), or only print it (default ${DEFAULT-VALUE}).")
    String onRevoke;

    private final Object cleanupLock = new Object();
    private OpenStore open;
    private CompletableFuture<Lease> pending;
    private Lease lease0;
    private Process child;
    private boolean cleanedUp;

    /** @return what is held, in messages: {@code lock} or {@code semaphore} */
    abstract String what();

    /**
     * @return the acquire of the command: (store, options) to a lease; {@code wait} zero: one attempt,
     *         completing empty when not free
     */
    abstract BiFunction<OpenStore, LockOptions, Mono<Lease>> acquire(boolean once);

    @Override
    public Integer call() {
        checkName(name);
        if (command == null || command.isEmpty()) {
            throw CliException.badInput("COMMAND is missing: " + what() + " NAME [options] -- command args...");
        }
        if (lease.isZero() || lease.isNegative()) {
            throw CliException.badInput("--lease must be positive");
        }
        if (!onRevoke.equals("stop") && !onRevoke.equals("ignore")) {
            throw CliException.badInput("--on-revoke must be stop or ignore, was " + onRevoke);
        }
        validate();
        StoreUrls.StoreUrl url = storeUrl();
        PrintStream err = System.err;
        Thread hook = new Thread(this::cleanup, "reactive-locks-cli-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            open = StoreUrls.open(url, lease);
            LockOptions.Builder ob = LockOptions.builder().leaseTime(lease);
            boolean once = wait.isZero();
            if (!once) {
                ob.waitTimeout(wait);
            }
            LockOptions options = ob.build();
            synchronized (cleanupLock) {
                if (cleanedUp) {
                    return 130;
                }
                pending = acquire(once).apply(open, options).toFuture();
            }
            Lease lease1;
            try {
                lease1 = pending.get(wait.toMillis() + 60_000, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw failure(url, e.getCause());
            } catch (TimeoutException e) {
                throw new CliException(ExitCodes.NOT_ACQUIRED, what() + " " + name + " not acquired within " + Durations.format(wait)
                        + " (--wait)");
            } catch (java.util.concurrent.CancellationException | InterruptedException e) {
                return 130; // Ctrl-C while waiting
            }
            if (lease1 == null) {
                throw notAcquired();
            }
            CompletableFuture<Void> lost = lease1.lost().toFuture();
            synchronized (cleanupLock) {
                lease0 = lease1;
                if (cleanedUp) {
                    return 130;
                }
                err.println("reactive-locks: acquired " + what() + " " + name + " (token " + lease1.token() + ")");
                ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
                pb.environment().put("REACTIVE_LOCKS_NAME", name);
                pb.environment().put("REACTIVE_LOCKS_TOKEN", Long.toString(lease1.token()));
                try {
                    child = pb.start();
                } catch (IOException e) {
                    throw new CliException(ExitCodes.FAILED, "cannot run " + command.get(0) + ": " + e.getMessage());
                }
            }
            // a revocation request (empty when the lease ends first, or at once for a grant that cannot be revoked)
            CompletableFuture<String> revocation = lease1.revoked().toFuture()
                    .thenCompose(r -> r == null ? new CompletableFuture<String>() : CompletableFuture.completedFuture(r));
            while (true) {
                CompletableFuture<Object> outcome = CompletableFuture.anyOf(child.onExit(), lost, revocation);
                try {
                    outcome.get();
                } catch (ExecutionException e) {
                    // lost() errs only when the client closes: treat as lost
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                if (!revocation.isDone() || lost.isDone() || !child.isAlive()) {
                    break;
                }
                String reason = revocation.getNow("");
                if (onRevoke.equals("stop")) {
                    err.println("reactive-locks: revocation requested for " + what() + " " + name + ": " + reason
                            + "; stopping the command and releasing");
                    stop(child);
                    return ExitCodes.REVOKED;
                }
                err.println("reactive-locks: revocation requested for " + what() + " " + name + ": " + reason
                        + "; ignored (--on-revoke ignore): the command goes on");
                revocation = lease1.revoked().toFuture()
                        .thenCompose(r -> r == null ? new CompletableFuture<String>() : CompletableFuture.completedFuture(r));
            }
            if (lost.isDone()) {
                err.println("reactive-locks: lost " + what() + " " + name + " (token " + lease1.token()
                        + ") while the command ran (the lease expired or was force-released); stopping the command");
                stop(child);
                return ExitCodes.LEASE_LOST;
            }
            int code = child.exitValue();
            return code;
        } finally {
            cleanup();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down already (Ctrl-C): the hook runs
            }
        }
    }

    /** Checks the subclass's options. */
    void validate() {
    }

    private CliException notAcquired() {
        return new CliException(ExitCodes.NOT_ACQUIRED, what() + " " + name + " is held"
                + (wait.isZero() ? " (one attempt, --wait 0)" : "; not acquired within " + Durations.format(wait) + " (--wait)"));
    }

    private CliException failure(StoreUrls.StoreUrl url, Throwable e) {
        if (e instanceof LockTimeoutException) {
            return notAcquired();
        }
        if (e instanceof LockBackendException) {
            return new CliException(ExitCodes.STORE_UNAVAILABLE, url.label() + ": " + Main.firstLine(e.getMessage()));
        }
        if (e instanceof CliException c) {
            return c;
        }
        if (e instanceof IllegalArgumentException) {
            return CliException.badInput(Main.firstLine(e.getMessage()));
        }
        return new CliException(ExitCodes.FAILED, e.getClass().getSimpleName() + ": " + Main.firstLine(e.getMessage()));
    }

    /** The end of the run, normal or Ctrl-C: stop the child, release, close. Idempotent. */
    private void cleanup() {
        synchronized (cleanupLock) {
            if (cleanedUp) {
                return;
            }
            cleanedUp = true;
            if (child != null && child.isAlive()) {
                stop(child);
            }
            if (pending != null && !pending.isDone()) {
                pending.cancel(true); // an acquire in progress leaves nothing behind
            }
            if (lease0 != null) {
                try {
                    lease0.release().block(Duration.ofSeconds(10));
                } catch (RuntimeException e) {
                    // lost or unreachable: the lease expires on the server
                }
            }
            if (open != null) {
                open.close();
            }
        }
    }

    /** Stops the child and its descendants: SIGTERM, then SIGKILL after {@link #GRACE}. */
    static void stop(Process p) {
        List<ProcessHandle> family = p.descendants().toList();
        family.forEach(ProcessHandle::destroy);
        p.destroy();
        try {
            if (!p.waitFor(GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
        family.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }
}
