package io.reactivelocks.test.server;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Joins the parallel starts of a deployment's nodes. */
final class Starts {

    private Starts() {
    }

    /**
     * Waits for every start; collects the started nodes into {@code started} (also those that started
     * when another failed, so the caller can close them) and rethrows the first failure.
     */
    static void join(List<CompletableFuture<ServerProcess>> starting, List<ServerProcess> started) {
        RuntimeException failure = null;
        for (CompletableFuture<ServerProcess> f : starting) {
            try {
                started.add(f.join());
            } catch (CompletionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException r ? r : e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
