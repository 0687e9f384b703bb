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
    /** The commands the server ran inside scripts ({@code [0 lua]} lines of the feed). */
    private static final AtomicLong SCRIPT_COMMANDS = new AtomicLong();
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
                    if (line.startsWith("+") && line.contains(" lua] ")) {
                        SCRIPT_COMMANDS.incrementAndGet();
                    } else if (line.startsWith("+")) {
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

    /** The commands run inside the scripts: the requests (EVALSHA) themselves are not among them. */
    @Override
    protected long serverCommands() {
        // read after the requests' count settled (quietCount): a script's commands are in the feed before its answer
        return SCRIPT_COMMANDS.get();
    }

    @Override
    protected double commandsPer(Operation operation) {
        return switch (operation) {
            // acquire.lua's new grant: GET, TIME, GET + SET of the fence, SET, PUBLISH; release.lua: GET, DEL, PUBLISH
            case LOCK_PAIR -> 9;
            // semaphore-acquire.lua with no holders: TIME, ZCARD, the fence's GET + SET, ZADD + HSET, PUBLISH, the two
            // keys' PEXPIRE (9: it asked ZSCORE for a grant of ours first until issue 30); its release ZREM, HDEL, PUBLISH
            case SEMAPHORE_PAIR -> 12;
            // rwlock-acquire.lua on a name no one holds: TIME, the two expiry sweeps, ZCARD of the grants (empty: no
            // writer and no grant of ours to look for), the writer's ZREM of its intent or the writer-preferring reader's
            // ZCARD of the intents, the fence's GET + SET, ZADD + HSET, PUBLISH, two PEXPIRE; rwlock-release.lua ZREM,
            // HDEL, PUBLISH. 23 each until the modes hash went into the tokens hash's one writer field (issue 30)
            case READ_PAIR, WRITE_PAIR -> 15;
            // beside a reader: ZSCORE (ours already?), HEXISTS of the writer field, the last expiry (ZRANGE) for the TTL
            // (22 before)
            case READ_BESIDE_READER_PAIR -> 18;
            // fair-acquire.lua with no queue: TIME, GET, ZRANGE of the queue's head (empty: no sweep, nothing to dequeue),
            // the fence's GET + SET, SET, PUBLISH; fair-release.lua for the holder: GET, DEL, PUBLISH (the holder is never
            // queued). 15 until issue 30: the deadlines' sweep, two ZREMs at the grant and two at the release
            case FAIR_PAIR -> 10;
            // semaphore-renew.lua for ten permits on ten names: TIME, per permit ZSCORE + HGET + ZADD, per name the
            // longest holder and the TTL of its two keys: 1 + 10 * 3 + 10 * 3 = 61
            case PERMIT_RENEWAL -> 6.1;
            // renew.lua: the GET that compares the grant and the PEXPIRE of the one lease due
            case RENEWAL_TICK -> 2;
            // per handoff the release (3) and the woken waiter's grant (6); the chain adds the last release: 6 * 9 + 3
            case HANDOFF -> (9.0 * WAITERS + 3) / WAITERS;
        };
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
