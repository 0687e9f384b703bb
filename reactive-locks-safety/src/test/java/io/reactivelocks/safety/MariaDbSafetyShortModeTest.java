package io.reactivelocks.safety;

import java.util.EnumSet;

/**
 * The short mode of the safety harness on MariaDB. In the build only a worker pause (the fencing of a
 * frozen holder) and a server restart (tokens and leases across a SIGKILL of mariadbd), to keep the
 * build's time; every fault with {@code -Dsafety.faults=PAUSE_WORKER,PAUSE_SERVER,...} and the long mode
 * ({@code run-long.sh --backends=MARIADB}).
 */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.A) // two fault-injection runs at a time, whatever else runs
class MariaDbSafetyShortModeTest extends SafetyShortModeContract {
    MariaDbSafetyShortModeTest() {
        super(SafetyBackend.MARIADB, EnumSet.of(Fault.PAUSE_WORKER, Fault.RESTART_SERVER));
    }
}
