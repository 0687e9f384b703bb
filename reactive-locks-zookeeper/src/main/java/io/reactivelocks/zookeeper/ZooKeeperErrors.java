package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.CuratorClosedException;
import org.apache.zookeeper.KeeperException;

/** Maps what Curator and ZooKeeper signal to the exception family, in one place. */
final class ZooKeeperErrors {

    private ZooKeeperErrors() {
    }

    /**
     * @param name      the lock concerned, or {@code null}
     * @param operation what failed, for the message
     * @param error     what Curator signalled
     * @return a {@link LockException}: transient for connection loss, expired or moved sessions
     *         and timeouts; permanent for authentication, ACL and argument errors
     */
    static LockException map(String name, String operation, Throwable error) {
        Throwable t = unwrap(error);
        if (t instanceof LockException le) {
            return le;
        }
        if (t instanceof CuratorClosedException) {
            return new LockClientClosedException(name);
        }
        if (t instanceof IllegalStateException) {
            return new LockBackendException(name, "the curator client is not usable (not started?): " + t.getMessage(), t, false);
        }
        String what = "zookeeper failed " + operation + (name == null ? "" : " of lock '" + name + "'") + ": " + t;
        return new LockBackendException(name, what, t, isTransient(t));
    }

    /** @return true when repeating the same operation may succeed */
    static boolean isTransient(Throwable error) {
        Throwable t = unwrap(error);
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
    static KeeperException.Code code(Throwable error) {
        Throwable t = unwrap(error);
        return t instanceof KeeperException ke ? ke.code() : null;
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
