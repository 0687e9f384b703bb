package io.reactivelocks.safety;

import io.reactivelocks.fencing.Fencing;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The ground truth of a safety run: a fenced register per lock name, served over TCP to the worker
 * processes (it runs in the harness process, apart from every worker). The order in which it
 * decides requests is the order of the run.
 *
 * <p>Each name has a value (starting at 0) and the highest token seen. A request — a read
 * {@code R name token worker} or a write {@code W name token worker value validAtSend} — carrying a
 * token lower than the highest seen is refused as stale and changes nothing; otherwise the highest
 * token becomes the request's token and a write sets the value. Reads are fenced as well as writes:
 * a holder that read before a newer holder's read can then no longer write, which is what makes a
 * read-modify-write safe (fencing writes alone would let two overlapping holders both succeed).
 * Equal tokens are accepted (the same lease reads then writes), so two holders given the same
 * token would both get through — and the checks (I1, I2, I3) find it.
 *
 * <p>The names of the other primitives are fenced by their own rule (docs/SAFETY.md):
 * <ul>
 *   <li><b>Semaphore</b> (N permits): per name at most N admitted tokens ("slots"). A request from
 *       an admitted token is accepted and marks its slot used now; a new token takes a free slot, or,
 *       when all N are taken, evicts the least recently used slot's token — the store granted a new
 *       permit, so one of the N has lost its own — and an evicted token is refused from then on.
 *       {@code D name token worker} (the holder is done, sent before it releases) frees the slot.
 *       A read answers the number of slots in use; a write changes nothing but is judged.</li>
 *   <li><b>Read-write lock</b>: one value, the highest token seen and the last writer's token. A
 *       writer's request (read or write, mode {@code w}) is accepted when its token is at least the
 *       highest token seen (readers' included), a reader's (mode {@code r}) when its token is at least
 *       the last writer's; an accepted request raises the highest token (and a writer's the last
 *       writer's). So a writer that excluded a reader with a higher token is refused, and a reader
 *       older than a writer that already came is refused.</li>
 * </ul>
 *
 * <p>Every decision is recorded ({@link #log()}) with its arrival sequence number and time; each answer ends
 * with {@code @seq}, that number, which the worker reports with the answer (the history's {@code order}).
 */
public final class Arbiter implements AutoCloseable {

    /**
     * One decided request.
     *
     * @param seq         arrival order (global)
     * @param nanos       {@link System#nanoTime()} at the decision
     * @param write       a write (else a read)
     * @param name        the lock name
     * @param token       the token presented
     * @param worker      the worker that sent it
     * @param value       the value read (for a read, when accepted) or written
     * @param accepted    whether the register took it
     * @param validAtSend for a write: whether the worker's lease was valid when it sent the write
     * @param previous    for an accepted write: the value it replaced; for a semaphore request that
     *                    evicted a slot: the evicted token; else -1
     * @param mode        {@code x} a mutex or fair-lock request, {@code s} a semaphore request,
     *                    {@code d} a semaphore holder done, {@code r} a reader's, {@code w} a writer's
     */
    public record Op(long seq, long nanos, boolean write, String name, long token, int worker, long value,
                     boolean accepted, boolean validAtSend, long previous, char mode) {
    }

    private static final class Register {
        long value;
        long highest = Long.MIN_VALUE;
        long lastWriter = Long.MIN_VALUE;
        /** semaphore slots: token -> when last used (arrival sequence) */
        final Map<Long, Long> slots = new HashMap<>();
        final Set<Long> evicted = new HashSet<>();
    }

    private final ServerSocket server;
    private final Map<String, Primitive> primitives;
    private final int permits;
    private final Map<String, Register> registers = new HashMap<>();
    private final List<Op> log = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;

    private Arbiter(Map<String, Primitive> primitives, int permits) throws IOException {
        this.primitives = Map.copyOf(primitives);
        this.permits = permits;
        server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "arbiter-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts an arbiter of mutex names on a free loopback port.
     *
     * @return the running arbiter
     */
    public static Arbiter start() {
        return start(Map.of(), 1);
    }

    /**
     * Starts an arbiter on a free loopback port.
     *
     * @param primitives the primitive of each name (a name not in the map is a mutex)
     * @param permits    N of the semaphore names
     * @return the running arbiter
     */
    public static Arbiter start(Map<String, Primitive> primitives, int permits) {
        try {
            return new Arbiter(primitives, permits);
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the arbiter's port", e);
        }
    }

    /** @return the port workers connect to */
    public int port() {
        return server.getLocalPort();
    }

    /** @return a copy of every decision so far, in arrival order */
    public synchronized List<Op> log() {
        return new ArrayList<>(log);
    }

    private void accept() {
        while (!closed) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                synchronized (sockets) {
                    sockets.add(s);
                }
                Thread t = new Thread(() -> serve(s), "arbiter-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("arbiter: accept failed: " + e);
                }
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s;
             BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintStream out = new PrintStream(s.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(decideAndNumber(line.split(" ")));
            }
        } catch (IOException e) {
            // a worker went away (killed); its requests so far are decided and logged
        }
    }

    /** Decides a request; the answer's last word is {@code @seq}, the decision's place in the arrival order. */
    private synchronized String decideAndNumber(String[] p) {
        long seq = log.size();
        return decide(p) + " @" + seq;
    }

    private synchronized String decide(String[] p) {
        String name = p[1];
        Primitive primitive = primitives.getOrDefault(name, Primitive.MUTEX);
        Register r = registers.computeIfAbsent(name, n -> new Register());
        if (primitive == Primitive.SEMAPHORE) {
            return semaphore(p, r);
        }
        boolean write = p[0].equals("W");
        long token = Long.parseLong(p[2]);
        int worker = Integer.parseInt(p[3]);
        char mode = 'x';
        long floor = r.highest;
        if (primitive == Primitive.RWLOCK) {
            mode = p[write ? 6 : 4].charAt(0);
            floor = mode == 'r' ? r.lastWriter : r.highest;
        }
        long seq = log.size();
        long now = System.nanoTime();
        if (!Fencing.admits(floor, token)) {
            long value = write ? Long.parseLong(p[4]) : -1;
            boolean valid = write && p[5].equals("1");
            log.add(new Op(seq, now, write, name, token, worker, value, false, valid, -1, mode));
            return "STALE " + floor;
        }
        r.highest = Math.max(r.highest, token);
        if (mode == 'w') {
            r.lastWriter = Math.max(r.lastWriter, token);
        }
        if (!write) {
            log.add(new Op(seq, now, false, name, token, worker, r.value, true, false, -1, mode));
            return "OK " + r.value;
        }
        long value = Long.parseLong(p[4]);
        long previous = r.value;
        r.value = value;
        log.add(new Op(seq, now, true, name, token, worker, value, true, p[5].equals("1"), previous, mode));
        return "OK";
    }

    private String semaphore(String[] p, Register r) {
        String name = p[1];
        long token = Long.parseLong(p[2]);
        int worker = Integer.parseInt(p[3]);
        long seq = log.size();
        long now = System.nanoTime();
        if (p[0].equals("D")) {
            boolean held = r.slots.remove(token) != null;
            log.add(new Op(seq, now, false, name, token, worker, r.slots.size(), held, false, -1, 'd'));
            return "OK";
        }
        boolean write = p[0].equals("W");
        long value = write ? Long.parseLong(p[4]) : r.slots.size();
        boolean valid = write && p[5].equals("1");
        long evicted = -1;
        if (r.evicted.contains(token)) {
            log.add(new Op(seq, now, write, name, token, worker, value, false, valid, -1, 's'));
            return "STALE evicted";
        }
        if (!r.slots.containsKey(token)) {
            if (write) {
                // a write whose read never took a slot: nothing admitted it
                log.add(new Op(seq, now, true, name, token, worker, value, false, valid, -1, 's'));
                return "STALE unread";
            }
            if (r.slots.size() >= permits) {
                long lru = -1;
                long oldest = Long.MAX_VALUE;
                for (Map.Entry<Long, Long> e : r.slots.entrySet()) {
                    if (e.getValue() < oldest) {
                        oldest = e.getValue();
                        lru = e.getKey();
                    }
                }
                r.slots.remove(lru);
                r.evicted.add(lru);
                evicted = lru;
            }
        }
        r.slots.put(token, seq);
        if (write) {
            r.value++;
        }
        log.add(new Op(seq, now, write, name, token, worker, write ? value : r.slots.size(), true, valid, evicted, 's'));
        return write ? "OK" : "OK " + r.slots.size();
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        synchronized (sockets) {
            for (Socket s : sockets) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closing
                }
            }
        }
    }
}
