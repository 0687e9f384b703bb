package io.reactivelocks.redis;

import io.reactivelocks.LockStore;
import io.reactivelocks.test.RequestCountContract;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Requests per operation as Redis counts them, on a server of this class alone: the commands its
 * {@code MONITOR} feed shows from clients — the commands a client sends, each once; those a Lua
 * script runs inside one request ({@code [0 lua]}) are not requests and are left out (which
 * {@code INFO commandstats} cannot do: it counts both).
 */
class RedisRequestCountTest extends RequestCountContract {

    private static RedisTestSupport redis;
    private static Socket monitor;
    private static final AtomicLong COMMANDS = new AtomicLong();
    /** The same count by command name (the first quoted word of a MONITOR line). */
    private static final java.util.concurrent.ConcurrentHashMap<String, Long> BY_COMMAND = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeAll
    static void startServer() throws IOException {
        redis = RedisTestSupport.start();
        monitor = new Socket(redis.server.host(), redis.server.port());
        monitor.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        monitor.getOutputStream().flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8));
        if (!"+OK".equals(in.readLine())) {
            throw new IllegalStateException("MONITOR refused");
        }
        Thread reader = new Thread(() -> {
            try {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    // +1700000000.123456 [0 127.0.0.1:40000] "evalsha" "..." — or [0 lua] from inside a script
                    if (line.startsWith("+") && !line.contains(" lua] ")) {
                        int from = line.indexOf("] \"");
                        int to = from < 0 ? -1 : line.indexOf('"', from + 3);
                        BY_COMMAND.merge(to < 0 ? "?" : line.substring(from + 3, to).toLowerCase(), 1L, Long::sum);
                        COMMANDS.incrementAndGet(); // after the tally: a reading that sees it sees the tally too
                    }
                }
            } catch (IOException e) {
                // the socket closed: the class is done
            }
        }, "redis-monitor");
        reader.setDaemon(true);
        reader.start();
    }

    @AfterAll
    static void stopServer() throws IOException {
        if (monitor != null) {
            monitor.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected LockStore connect(Duration leaseTime) {
        return RedisLocks.connect(redis.client, redis.options());
    }

    @Override
    protected long serverRequests() {
        return COMMANDS.get();
    }

    @Override
    protected java.util.Map<String, Long> requestsByKind() {
        return new java.util.TreeMap<>(BY_COMMAND);
    }

    @Override
    protected double requestsPer(Operation operation) {
        return switch (operation) {
            // every concept: one script call to acquire, one to release (the pub/sub connection is not touched)
            case LOCK_PAIR, SEMAPHORE_PAIR, READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR, FAIR_PAIR -> 2;
            // one EVALSHA renews every lease due in the tick
            // one semaphore-renew.lua call renews every permit due in the tick (on one server; per slot on a cluster)
            case PERMIT_RENEWAL -> 1.0 / RENEWED_PERMITS;
            case RENEWAL_TICK -> 1;
            // per handoff the release and the woken waiter's grant; the chain adds the last grantee's release
            // and the UNSUBSCRIBE of the name's channel a linger (1 s) after its last waiter left: 2 * 6 + 2 = 14
            case HANDOFF -> (2.0 * WAITERS + 2) / WAITERS;
        };
    }
}
