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
import java.util.List;
import java.util.Map;

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
 * <p>Every decision is recorded ({@link #log()}) with its arrival sequence number and time.
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
     * @param previous    for an accepted write: the value it replaced
     */
    public record Op(long seq, long nanos, boolean write, String name, long token, int worker, long value,
                     boolean accepted, boolean validAtSend, long previous) {
    }

    private static final class Register {
        long value;
        long highest = Long.MIN_VALUE;
    }

    private final ServerSocket server;
    private final Map<String, Register> registers = new HashMap<>();
    private final List<Op> log = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;

    private Arbiter() throws IOException {
        server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "arbiter-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Starts an arbiter on a free loopback port.
     *
     * @return the running arbiter
     */
    public static Arbiter start() {
        try {
            return new Arbiter();
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
                out.println(decide(line.split(" ")));
            }
        } catch (IOException e) {
            // a worker went away (killed); its requests so far are decided and logged
        }
    }

    private synchronized String decide(String[] p) {
        boolean write = p[0].equals("W");
        String name = p[1];
        long token = Long.parseLong(p[2]);
        int worker = Integer.parseInt(p[3]);
        Register r = registers.computeIfAbsent(name, n -> new Register());
        long seq = log.size();
        long now = System.nanoTime();
        if (!Fencing.admits(r.highest, token)) {
            long value = write ? Long.parseLong(p[4]) : -1;
            boolean valid = write && p[5].equals("1");
            log.add(new Op(seq, now, write, name, token, worker, value, false, valid, -1));
            return "STALE " + r.highest;
        }
        r.highest = token;
        if (!write) {
            log.add(new Op(seq, now, false, name, token, worker, r.value, true, false, -1));
            return "OK " + r.value;
        }
        long value = Long.parseLong(p[4]);
        long previous = r.value;
        r.value = value;
        log.add(new Op(seq, now, true, name, token, worker, value, true, p[5].equals("1"), previous));
        return "OK";
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
