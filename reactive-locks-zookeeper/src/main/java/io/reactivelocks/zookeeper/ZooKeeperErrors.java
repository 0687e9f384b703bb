package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.BackendErrors;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.CuratorClosedException;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/** Maps what Curator and ZooKeeper signal to the exception family, in one place. */
final class ZooKeeperErrors {

    private static final BackendErrors ERRORS = BackendErrors.of("zookeeper", ZooKeeperErrors::isTransient);

    private ZooKeeperErrors() {
    }

    /**
     * @param name      the lock concerned, or {@code null}
     * @param operation what failed, for the message
     * @param error     what Curator signalled
     * @return a {@link LockException}: transient for connection loss, expired or moved sessions
     *         and timeouts; permanent for authentication, ACL and argument errors
     */
    static LockException map(@Nullable String name, String operation, Throwable error) {
        Throwable t = BackendErrors.unwrap(error);
        if (t instanceof CuratorClosedException) {
            return new LockClientClosedException(name);
        }
        if (t instanceof IllegalStateException) {
            return new LockBackendException(name, "the curator client is not usable (not started?): " + t.getMessage(), t, false);
        }
        return ERRORS.map(name, operation, t);
    }

    /** @return true when repeating the same operation may succeed */
    static boolean isTransient(Throwable error) {
        Throwable t = BackendErrors.unwrap(error);
        if (t instanceof LockBackendException be) {
            return be.isTransient();
        }
        if (t instanceof TimeoutException) {
            return true;
        }
        if (t instanceof KeeperException ke) {
            return switch (ke.code()) {
                case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, REQUESTTIMEOUT,
                     THROTTLEDOP, RECONFIGINPROGRESS, NOTREADONLY, SYSTEMERROR, RUNTIMEINCONSISTENCY,
                     DATAINCONSISTENCY, MARSHALLINGERROR, SESSIONCLOSEDREQUIRESASLAUTH -> true;
                default -> false;
            };
        }
        return false;
    }

    /** @return the ZooKeeper result code of {@code error}, or {@code null} when it is not a {@link KeeperException} */
    static KeeperException.@Nullable Code code(Throwable error) {
        Throwable t = BackendErrors.unwrap(error);
        return t instanceof KeeperException ke ? ke.code() : null;
    }
}
