package io.reactivelocks.etcd;

import io.etcd.jetcd.Client;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Reconnects a jetcd client's gRPC channel soon after etcd is back, instead of on gRPC's own
 * reconnect backoff. While etcd is unreachable the channel is in {@code TRANSIENT_FAILURE} and
 * grpc-java tries to connect again only after a backoff that starts at 1 s and grows by 1.6× per
 * failed attempt up to 2 minutes — after a 20 s outage a client waits ~10 s more, after a minute
 * ~25 s, whatever the lock client's timeouts. While the channel stays in
 * {@code TRANSIENT_FAILURE}, this cuts that backoff short every {@code interval}
 * ({@link ManagedChannel#resetConnectBackoff()}): one connection attempt per interval, so a client
 * connected before an outage resumes within about an interval of etcd answering again.
 *
 * <p>jetcd does not expose its channel, so it is read from the client's fields (jetcd 0.8's
 * {@code ClientImpl}); with any other {@link Client} this does nothing and says so once, at INFO.
 * It follows the channel's state through {@link ManagedChannel#notifyWhenStateChanged} (no timer
 * while connected) and stops on {@link #dispose()} or when the channel shuts down.
 */
final class ChannelReconnect implements Disposable {

    private static final Logger LOG = Loggers.getLogger(ChannelReconnect.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    /** The followers started by {@link #follow(Client, Duration, Scheduler)}: one per client (weak keys). */
    private static final Map<Client, ChannelReconnect> SHARED = new WeakHashMap<>();

    private final @Nullable ManagedChannel channel;
    private final Duration interval;
    private final Scheduler scheduler;
    private final AtomicBoolean started = new AtomicBoolean();

    // guarded by this
    private boolean disposed;
    private @Nullable Disposable timer;

    /**
     * @param client    the jetcd client whose channel to follow
     * @param interval  how often to cut the reconnect backoff short while disconnected; zero = never
     * @param scheduler where the interval's timer runs
     */
    ChannelReconnect(Client client, Duration interval, Scheduler scheduler) {
        this.channel = interval.isZero() ? null : channelOf(client);
        this.interval = interval;
        this.scheduler = scheduler;
    }

    /**
     * Follows the channel of {@code client} for the stores that have no lifecycle of their own to
     * stop it with (semaphore, read-write lock, window lock): one follower per client, started now
     * (it sends nothing: it reads the channel's state and asks to be told of changes) and ending
     * when the client's channel shuts down.
     *
     * @param client    the jetcd client whose channel to follow
     * @param interval  how often to cut the reconnect backoff short while disconnected; zero = never
     * @param scheduler where the interval's timer runs
     */
    static void follow(Client client, Duration interval, Scheduler scheduler) {
        if (interval.isZero()) {
            return;
        }
        ChannelReconnect r;
        synchronized (SHARED) {
            r = SHARED.get(client);
            if (r != null && !r.isDisposed() && r.channel != null && !r.channel.isShutdown()) {
                return;
            }
            r = new ChannelReconnect(client, interval, scheduler);
            SHARED.put(client, r);
        }
        r.start();
    }

    /** Starts following the channel's state (idempotent; lazily, with the first operation). */
    void start() {
        if (channel != null && started.compareAndSet(false, true)) {
            follow();
        }
    }

    private void follow() {
        ManagedChannel ch = channel;
        ConnectivityState state = ch.getState(false);
        synchronized (this) {
            if (disposed || state == ConnectivityState.SHUTDOWN) {
                return;
            }
            if (state == ConnectivityState.TRANSIENT_FAILURE) {
                // gRPC keeps the channel in TRANSIENT_FAILURE across its own failed attempts: poll it
                timer = schedule(this::cutBackoffShort);
                return;
            }
        }
        ch.notifyWhenStateChanged(state, this::follow);
    }

    private void cutBackoffShort() {
        ManagedChannel ch = channel;
        synchronized (this) {
            timer = null;
            if (disposed) {
                return;
            }
        }
        if (ch.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            ch.resetConnectBackoff();
        }
        follow();
    }

    // guarded by this
    private @Nullable Disposable schedule(Runnable task) {
        try {
            return scheduler.schedule(task, interval.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the scheduler is gone, so is the application: gRPC's own backoff reconnects
        }
    }

    /** Stops following the channel (a state notification still pending then does nothing). */
    @Override
    public void dispose() {
        Disposable t;
        synchronized (this) {
            disposed = true;
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.dispose();
        }
    }

    @Override
    public synchronized boolean isDisposed() {
        return disposed;
    }

    /** @return the gRPC channel of a jetcd 0.8 {@code ClientImpl}, or null when it cannot be read */
    static @Nullable ManagedChannel channelOf(Client client) {
        try {
            Field manager = client.getClass().getDeclaredField("connectionManager");
            manager.setAccessible(true);
            Object m = manager.get(client);
            Method getChannel = m.getClass().getDeclaredMethod("getChannel");
            getChannel.setAccessible(true);
            return (ManagedChannel) getChannel.invoke(m);
        } catch (ReflectiveOperationException | RuntimeException e) {
            if (WARNED.compareAndSet(false, true)) {
                LOG.info("cannot read the gRPC channel of {}: after an etcd outage its clients reconnect on gRPC's"
                        + " own backoff (up to 2 minutes): {}", client.getClass().getName(), e.toString());
            }
            return null;
        }
    }
}
