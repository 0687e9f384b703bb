package io.reactivelocks.cli;

import io.reactivelocks.LockBackendException;
import java.util.function.Supplier;

/** Calls to the store on the CLI's main thread, their failures as {@link CliException}s. */
final class Admin {

    private Admin() {
    }

    static <T> T call(StoreUrls.StoreUrl url, Supplier<T> call) {
        try {
            return call.get();
        } catch (CliException e) {
            throw e;
        } catch (LockBackendException e) {
            throw new CliException(ExitCodes.STORE_UNAVAILABLE, url.label() + ": " + Main.firstLine(e.getMessage()));
        } catch (UnsupportedOperationException e) {
            throw new CliException(ExitCodes.FAILED, url.label() + " does not offer this: " + Main.firstLine(e.getMessage()));
        } catch (IllegalArgumentException e) {
            throw CliException.badInput(Main.firstLine(e.getMessage()));
        } catch (IllegalStateException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            if (cause instanceof java.util.concurrent.TimeoutException || String.valueOf(e.getMessage()).startsWith("Timeout")) {
                throw new CliException(ExitCodes.STORE_UNAVAILABLE, url.label() + " did not answer in time");
            }
            throw new CliException(ExitCodes.FAILED, Main.firstLine(e.getMessage()));
        }
    }
}
