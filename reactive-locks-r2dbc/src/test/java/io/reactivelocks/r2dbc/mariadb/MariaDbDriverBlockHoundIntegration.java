package io.reactivelocks.r2dbc.mariadb;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The blocking calls inside r2dbc-mariadb that BlockHound must let pass in this module's tests, short
 * and not ours:
 * <ul>
 *   <li>each new connection looks its authentication plugin up through a {@code ServiceLoader}
 *       ({@code AuthenticationFlowPluginLoader.get}), and the first one reads the driver's version
 *       file ({@code VersionFactory.getInstance}): reads of a resource from the driver's jar;</li>
 *   <li>each connection guards its queue of commands with a {@code ReentrantLock}
 *       ({@code SimpleClient}), held for in-memory work only; the event loop reading answers and a
 *       thread sending the next command may meet there and park for a moment. (Were BlockHound to
 *       throw inside {@code lock()}, the driver's {@code finally} would unlock a lock it never took:
 *       an {@code IllegalMonitorStateException}.)</li>
 * </ul>
 */
public final class MariaDbDriverBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.util.VersionFactory", "getInstance");
        for (String method : new String[] {"executeWhenNotInTransaction", "executeWhenTransaction", "setAutoCommit",
            "sendCommandWithoutResult", "lambda$receive$15", "lambda$sendCommand$17", "lambda$sendCommand$20"}) {
            builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", method);
        }
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient$ServerMessageSubscriber", "tryDrainQueue");
    }
}
