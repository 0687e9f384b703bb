package io.reactivelocks.test.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A TCP proxy on a free loopback port that forwards to one target and injects network faults,
 * switchable at runtime: {@link #latency(Duration, Duration)}, {@link #blackhole()},
 * {@link #refuse()}, {@link #cutConnections()} and {@link #heal()}. Point the client under test at
 * {@link #host()}:{@link #port()} instead of the server.
 *
 * <p>It runs on its own daemon threads with blocking sockets (an acceptor, and per connection one
 * reader and one writer per direction), never on Reactor threads. Within each direction, bytes are
 * forwarded in order, whatever the latency and jitter. All control methods return at once and are
 * safe to call from any thread.
 */
public final class FaultProxy implements AutoCloseable {

    private static final int CHUNK_SIZE = 16 * 1024;
    private static final int QUEUE_CHUNKS = 256;
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final AtomicInteger PROXY_IDS = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Thread acceptor;
    private final String threadPrefix;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition stateChanged = stateLock.newCondition();
    private final AtomicLong bytesToTarget = new AtomicLong();
    private final AtomicLong bytesFromTarget = new AtomicLong();
    private final AtomicLong connectionsAccepted = new AtomicLong();
    private final AtomicInteger linkIds = new AtomicInteger();
    private volatile Latency latency = Latency.NONE;
    private volatile boolean blackholed;
    private volatile boolean refusing;
    private volatile boolean closed;

    private record Latency(long baseNanos, long jitterNanos) {
        static final Latency NONE = new Latency(0, 0);

        long sample() {
            return baseNanos + (jitterNanos == 0 ? 0 : ThreadLocalRandom.current().nextLong(jitterNanos + 1));
        }
    }

    private FaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        this.threadPrefix = "fault-proxy-" + PROXY_IDS.incrementAndGet() + "-" + server.getLocalPort();
        this.acceptor = new Thread(this::acceptLoop, threadPrefix + "-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts a proxy on a free loopback port forwarding to {@code targetHost:targetPort}.
     *
     * @param targetHost the server's host
     * @param targetPort the server's port
     * @return the running proxy, forwarding normally
     * @throws UncheckedIOException when no loopback port can be bound
     */
    public static FaultProxy start(String targetHost, int targetPort) {
        return start(new InetSocketAddress(Objects.requireNonNull(targetHost, "targetHost"), targetPort));
    }

    /**
     * Starts a proxy on a free loopback port forwarding to {@code target}.
     *
     * @param target the server's address
     * @return the running proxy, forwarding normally
     * @throws UncheckedIOException when no loopback port can be bound
     */
    public static FaultProxy start(InetSocketAddress target) {
        try {
            return new FaultProxy(Objects.requireNonNull(target, "target"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot bind a fault proxy on the loopback interface", e);
        }
    }

    /** @return the loopback address clients connect to, as text */
    public String host() {
        return server.getInetAddress().getHostAddress();
    }

    /** @return the port clients connect to */
    public int port() {
        return server.getLocalPort();
    }

    /** @return the address clients connect to */
    public InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    /** @return the address this proxy forwards to */
    public InetSocketAddress target() {
        return target;
    }

    /**
     * Delays every forwarded chunk, in both directions, by {@code base} plus a uniform random extra
     * in {@code [0, jitter]}, measured from when the proxy read it; order within a direction is kept
     * (a chunk never overtakes an earlier one). {@code latency(ZERO, ZERO)} removes the delay.
     *
     * @param base   the minimum delay per chunk
     * @param jitter the maximum random extra delay per chunk
     * @return this proxy
     * @throws IllegalArgumentException when a duration is negative
     */
    public FaultProxy latency(Duration base, Duration jitter) {
        if (base.isNegative() || jitter.isNegative()) {
            throw new IllegalArgumentException("latency must not be negative: base " + base + ", jitter " + jitter);
        }
        latency = new Latency(base.toNanos(), jitter.toNanos());
        return this;
    }

    /**
     * Stops forwarding anything, in either direction, like a network partition: existing connections
     * stay open and silent (bytes and FINs are held), new connections are accepted but never reach
     * the target. {@link #heal()} delivers what was held, in order.
     *
     * @return this proxy
     */
    public FaultProxy blackhole() {
        blackholed = true;
        signal();
        return this;
    }

    /**
     * Closes every new connection at once with a reset (SO_LINGER 0), like a server whose port is
     * closed; existing connections are not touched.
     *
     * @return this proxy
     */
    public FaultProxy refuse() {
        refusing = true;
        signal();
        return this;
    }

    /**
     * Back to normal forwarding: ends {@link #blackhole()}, {@link #refuse()} and latency. Connections
     * that were blackholed are resumed, not cut: the bytes held during the blackhole are delivered in
     * order (as TCP retransmission would after a short partition). Call {@link #cutConnections()}
     * first to model a partition long enough to break connections.
     *
     * @return this proxy
     */
    public FaultProxy heal() {
        blackholed = false;
        refusing = false;
        latency = Latency.NONE;
        signal();
        return this;
    }

    /**
     * Closes every current connection on both sides with a TCP reset (SO_LINGER 0), so the client
     * sees "connection reset" (or end of stream); the proxy keeps accepting new connections.
     *
     * @return how many connections were cut
     */
    public int cutConnections() {
        int n = 0;
        for (Link link : links) {
            if (link.cut()) {
                n++;
            }
        }
        return n;
    }

    /** @return true while {@link #blackhole()} is in force */
    public boolean isBlackholed() {
        return blackholed;
    }

    /** @return true while {@link #refuse()} is in force */
    public boolean isRefusing() {
        return refusing;
    }

    /** @return bytes forwarded in both directions since start */
    public long bytesForwarded() {
        return bytesToTarget.get() + bytesFromTarget.get();
    }

    /** @return bytes forwarded from clients to the target since start */
    public long bytesToTarget() {
        return bytesToTarget.get();
    }

    /** @return bytes forwarded from the target to clients since start */
    public long bytesFromTarget() {
        return bytesFromTarget.get();
    }

    /** @return connections accepted since start, including refused and blackholed ones */
    public long connectionsAccepted() {
        return connectionsAccepted.get();
    }

    /** @return connections currently open through the proxy */
    public int activeConnections() {
        return links.size();
    }

    /** Stops accepting, resets every connection and ends the proxy's threads; idempotent. */
    @Override
    public void close() {
        closed = true;
        signal();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        cutConnections();
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "FaultProxy[" + host() + ":" + port() + " -> " + target + (blackholed ? " blackholed" : "")
                + (refusing ? " refusing" : "") + "]";
    }

    // ------------------------------------------------------------------ internals

    private void signal() {
        stateLock.lock();
        try {
            stateChanged.signalAll();
        } finally {
            stateLock.unlock();
        }
    }

    /** Waits while blackholed; false when the link or the proxy closed meanwhile. */
    private boolean awaitForwarding(Link link) {
        stateLock.lock();
        try {
            while (blackholed && !closed && !link.closed) {
                try {
                    stateChanged.awaitNanos(POLL_NANOS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return !closed && !link.closed;
        } finally {
            stateLock.unlock();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            connectionsAccepted.incrementAndGet();
            if (refusing || closed) {
                reset(client);
                continue;
            }
            Link link = new Link(client, linkIds.incrementAndGet());
            links.add(link);
            daemon(link::open, "link-" + link.id + "-open").start();
        }
    }

    private Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, threadPrefix + "-" + name);
        t.setDaemon(true);
        return t;
    }

    private static void reset(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    /** One proxied connection: the client socket, the upstream socket and two pumps. */
    private final class Link {
        final Socket client;
        final int id;
        volatile Socket upstream;
        volatile boolean closed;
        final AtomicBoolean closing = new AtomicBoolean();
        final AtomicInteger finishedDirections = new AtomicInteger();

        Link(Socket client, int id) {
            this.client = client;
            this.id = id;
        }

        void open() {
            // a blackholed proxy accepts but does not reach the target until healed
            if (!awaitForwarding(this)) {
                close(true);
                return;
            }
            Socket up = new Socket();
            try {
                up.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                up.connect(target, CONNECT_TIMEOUT_MILLIS);
            } catch (IOException e) {
                reset(up);
                close(true);
                return;
            }
            upstream = up;
            if (closed) {
                // cut while connecting: close() may not have seen the upstream socket
                reset(up);
                return;
            }
            new Pump(this, client, up, bytesToTarget, "up").start();
            new Pump(this, up, client, bytesFromTarget, "down").start();
        }

        /** Resets both sides; true when this call closed the link. */
        boolean cut() {
            return close(true);
        }

        void directionFinished() {
            if (finishedDirections.incrementAndGet() == 2) {
                close(false);
            }
        }

        boolean close(boolean withReset) {
            if (!closing.compareAndSet(false, true)) {
                return false;
            }
            closed = true;
            links.remove(this);
            for (Socket s : new Socket[] {client, upstream}) {
                if (s == null) {
                    continue;
                }
                if (withReset) {
                    reset(s);
                } else {
                    try {
                        s.close();
                    } catch (IOException ignored) {
                        // nothing to do
                    }
                }
            }
            return true;
        }
    }

    /** A chunk read from one side, due to be written at {@code dueNanos}; {@code data == null} marks end of stream. */
    private record Chunk(byte[] data, long dueNanos) {
    }

    /** One direction of a link: a reader that queues chunks with their due time and a writer that forwards them in order. */
    private final class Pump {
        private final Link link;
        private final Socket from;
        private final Socket to;
        private final AtomicLong counter;
        private final String direction;
        private final BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS);

        Pump(Link link, Socket from, Socket to, AtomicLong counter, String direction) {
            this.link = link;
            this.from = from;
            this.to = to;
            this.counter = counter;
            this.direction = direction;
        }

        void start() {
            daemon(this::read, "link-" + link.id + "-" + direction + "-read").start();
            daemon(this::write, "link-" + link.id + "-" + direction + "-write").start();
        }

        private void read() {
            byte[] buffer = new byte[CHUNK_SIZE];
            long lastDue = 0;
            try {
                InputStream in = from.getInputStream();
                while (!link.closed) {
                    int n = in.read(buffer);
                    long now = System.nanoTime();
                    long due = now + latency.sample();
                    // never overtake an earlier chunk, whatever the jitter
                    if (lastDue != 0 && due - lastDue < 0) {
                        due = lastDue;
                    }
                    lastDue = due;
                    Chunk chunk = new Chunk(n < 0 ? null : Arrays.copyOf(buffer, n), due);
                    while (!queue.offer(chunk, POLL_NANOS, TimeUnit.NANOSECONDS)) {
                        if (link.closed) {
                            return;
                        }
                    }
                    if (n < 0) {
                        return;
                    }
                }
            } catch (IOException e) {
                link.cut();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                link.cut();
            }
        }

        private void write() {
            try {
                OutputStream out = to.getOutputStream();
                while (!link.closed) {
                    Chunk chunk = queue.poll(POLL_NANOS, TimeUnit.NANOSECONDS);
                    if (chunk == null) {
                        continue;
                    }
                    long wait;
                    while ((wait = chunk.dueNanos() - System.nanoTime()) > 0 && !link.closed) {
                        LockSupport.parkNanos(Math.min(wait, POLL_NANOS));
                    }
                    if (!awaitForwarding(link)) {
                        return;
                    }
                    if (chunk.data() == null) {
                        if (!to.isClosed()) {
                            to.shutdownOutput();
                        }
                        link.directionFinished();
                        return;
                    }
                    out.write(chunk.data());
                    out.flush();
                    counter.addAndGet(chunk.data().length);
                }
            } catch (IOException e) {
                link.cut();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                link.cut();
            }
        }
    }
}
