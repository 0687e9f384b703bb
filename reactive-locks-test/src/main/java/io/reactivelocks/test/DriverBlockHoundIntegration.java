package io.reactivelocks.test;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * The few blocking calls inside the drivers that BlockHound must let pass in tests, each short,
 * in-memory or one-time, none of them ours. Registered as a service, so every test JVM that has
 * this module on its class path gets exactly these allowances and nothing broader:
 * <ul>
 *   <li>Lettuce guards each write to a connection with a lock held for nanoseconds
 *       ({@code SharedLock}); two event loops writing to one connection at once may park briefly;</li>
 *   <li>Netty loads its native transport once per JVM ({@code NativeLibraryLoader.load} copies the library
 *       out of its jar); reactor-netty's first client or server made on a non-blocking thread (the examples'
 *       web clients) does it there, and a throw in a class initializer would only make Netty fall back
 *       to NIO without a word;</li>
 *   <li>java.util.logging's one-time global set-up takes a lock (drivers without an SLF4J binding);</li>
 *   <li>{@code SSLContext.init} run by a driver per TLS connect reads the JDK's entropy device;</li>
 *   <li>the SCRAM client of r2dbc-postgresql draws its nonce from the entropy device;</li>
 *   <li>ZooKeeper's client queues each request on a {@code LinkedBlockingDeque} shared with its send
 *       thread ({@code ClientCnxn.queuePacket}); the two may meet on its lock for a moment (seen in a
 *       loaded CI run: Curator gave up a background delete with BlockHound's error, a prune never sent);</li>
 *   <li>Curator's protection mode draws a {@code UUID.randomUUID()} (the entropy device) per create;</li>
 *   <li>Netty 4.2's default adaptive buffer allocator holds a {@code StampedLock} write lock for a
 *       moment when it frees or expands a magazine; BlockHound throwing there (inside Lettuce's
 *       {@code channelRegistered}) left a connection that never read an answer;</li>
 *   <li>Lettuce's cluster connection provider guards its slot-to-connection caches with a lock held for
 *       in-memory work ({@code PooledClusterConnectionProvider.stateLock}); a connection to a node
 *       completing on an event loop while another thread looks a slot up may park there for a moment
 *       (a loaded CI run: an admin read failed with BlockHound's error right after a failover);</li>
 *   <li>Lettuce caches the command methods of its sync/async facades behind a lock when it makes a
 *       connection ({@code MethodTranslator.of}), in memory; connections opened at once from
 *       several non-blocking threads (coroutines on {@code Dispatchers.Default}) may park briefly;</li>
 *   <li>jetcd sends every request through Failsafe on the client's executor (a cached thread pool
 *       unless {@code ClientBuilder.executorService} is set): when no pooled thread is idle the
 *       submitting thread starts one under the pool's lock, and 24 requests sent at once from
 *       Reactor's parallel threads met there (a read-write race failed in CI);</li>
 *   <li>closing a jetcd client closes its Vert.x instance, whose worker pool is shut down on a
 *       Vert.x event loop under the pool's lock;</li>
 *   <li>r2dbc-mariadb looks each new connection's authentication plugin up through a {@code ServiceLoader}
 *       and reads its version file once (resources of the driver's jar), and guards each connection's
 *       command queue with a {@code ReentrantLock} held for in-memory work (the event loop reading answers
 *       and a thread sending the next command may meet there for a moment).</li>
 * </ul>
 * And one call marked blocking, so that every test catches it on a non-blocking thread, not only a
 * contended one: closing a jetcd client ({@code ClientImpl.close}) shuts its executors down
 * ({@code ThreadPoolExecutor.shutdownNow} takes the pool's lock). A store that owns its client closes
 * it on bounded-elastic (a read-write store closed at the end of a release chain parked an event loop
 * there, seen in a loaded CI run).
 *
 * <p>Every blocking call found is also printed with its stack to the test's error output before it is
 * thrown: a driver may swallow the error (Lettuce's reconnect task catches only {@code Exception}, so an
 * {@code Error} thrown in it ends the reconnecting without a word), and the report then still names the call.
 */
public final class DriverBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters");
        builder.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "doExclusive");
        builder.allowBlockingCallsInside("io.lettuce.core.internal.AbstractInvocationHandler$MethodTranslator", "of");
        for (String method : new String[] {"lambda$getWriteConnection$1", "getReadConnection", "lambda$getReadConnection$5",
            "setPartitions", "resetFastConnectionCache", "setReadFrom"}) {
            builder.allowBlockingCallsInside("io.lettuce.core.cluster.PooledClusterConnectionProvider", method);
        }
        builder.allowBlockingCallsInside("io.lettuce.core.cluster.PooledClusterConnectionProvider$NodeConnectionPostProcessor",
                "lambda$apply$4");
        builder.allowBlockingCallsInside("java.util.logging.LogManager", "initializeGlobalHandlers");
        builder.allowBlockingCallsInside("io.netty.util.internal.NativeLibraryLoader", "load");
        builder.allowBlockingCallsInside("sun.security.provider.NativePRNG$RandomIO", "implNextBytes");
        builder.allowBlockingCallsInside("com.ongres.scram.common.util.CryptoUtil", "nonce");
        builder.allowBlockingCallsInside("org.apache.curator.framework.imps.ProtectedMode", "resetProtectedId");
        builder.allowBlockingCallsInside("org.apache.zookeeper.ClientCnxn", "queuePacket");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "free");
        builder.allowBlockingCallsInside("dev.failsafe.internal.util.DelegatingScheduler", "schedule");
        builder.allowBlockingCallsInside("io.vertx.core.internal.WorkerPool", "close");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.authentication.AuthenticationFlowPluginLoader", "get");
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.util.VersionFactory", "getInstance");
        for (String method : new String[] {"executeWhenNotInTransaction", "executeWhenTransaction", "setAutoCommit",
            "sendCommandWithoutResult", "lambda$receive$15", "lambda$sendCommand$17", "lambda$sendCommand$20"}) {
            builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient", method);
        }
        builder.allowBlockingCallsInside("org.mariadb.r2dbc.client.SimpleClient$ServerMessageSubscriber", "tryDrainQueue");
        builder.markAsBlocking("io.etcd.jetcd.impl.ClientImpl", "close", "()V");
        builder.blockingMethodCallback(method -> {
            BlockingOperationError error = new BlockingOperationError(method);
            System.err.println("BlockHound: blocking call " + method + " on " + Thread.currentThread().getName()
                    + " (thrown to the caller; printed here in case the caller swallows it)");
            error.printStackTrace();
            throw error;
        });
    }
}
