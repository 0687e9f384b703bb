package io.reactivelocks.safety.badinput;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.test.fault.FaultProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.awaitility.Awaitility;
import org.reactivestreams.Publisher;
import reactor.test.StepVerifier;

/**
 * Assertions shared by the bad-input catalogue: an argument error at call time with the exact
 * type and a message naming the argument; a store error as an {@code onError} of the exact type
 * within a bound derived from the configured timeout; a lock that is free afterwards.
 */
final class BadInput {

    /** Slack on top of a configured timeout: scheduling, the first connect, a loaded CI machine. */
    static final Duration SLACK = Duration.ofSeconds(2);

    /** Bound of steps that must simply work (setup, clean-up, round trips). */
    static final Duration STEP = Duration.ofSeconds(15);

    private BadInput() {
    }

    /**
     * Asserts that {@code call} throws, at call time, exactly {@code type} with a message containing
     * every one of {@code words} (the argument's name, and what is wrong with it).
     */
    static <T extends Throwable> void rejectedAtCall(Class<T> type, ThrowingCallable call, String... words) {
        assertThatThrownBy(call).isExactlyInstanceOf(type).hasMessageContainingAll(words);
    }

    /**
     * Subscribes to {@code publisher} and asserts that it ends with exactly {@code type} within
     * {@code timeout} + {@link #SLACK}, with a message containing every one of {@code words}; emits
     * nothing before the error.
     *
     * @return the error, for further assertions
     */
    static <T extends Throwable> T errorsWithin(Publisher<?> publisher, Class<T> type, Duration timeout, String... words) {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Duration took = StepVerifier.create(publisher)
                .expectErrorSatisfies(e -> {
                    seen.set(e);
                    assertThat(e).isExactlyInstanceOf(type).hasMessageContainingAll(words);
                })
                .verify(timeout.plus(SLACK));
        assertThat(took).as("error must arrive within the configured timeout %s (+ %s slack)", timeout, SLACK)
                .isLessThanOrEqualTo(timeout.plus(SLACK));
        return type.cast(seen.get());
    }

    /** Like {@link #errorsWithin}, for a {@link LockBackendException} whose {@code isTransient()} is as given. */
    static LockBackendException backendErrorWithin(Publisher<?> publisher, boolean transientFailure, Duration timeout,
                                                   String... words) {
        LockBackendException e = errorsWithin(publisher, LockBackendException.class, timeout, words);
        assertThat(e.isTransient()).as("isTransient() of %s", e).isEqualTo(transientFailure);
        return e;
    }

    /** Asserts that {@code name} is free as seen by {@code observer} (its first observed state). */
    static void assertFree(LockClient observer, String name) {
        StepVerifier.create(observer.observe(name).next())
                .assertNext(s -> assertThat(s).as("state of '%s' after the failure", name).isInstanceOf(LockState.Free.class))
                .expectComplete()
                .verify(STEP);
    }

    /**
     * The refused-connection kind: {@code tryAcquire} fails with a transient error within the request
     * timeout, and a waiting {@code acquire} retries it and reports it when its wait timeout ends.
     */
    static void assertRefusedTransiently(LockClient locks, LockOptions options, String... words) {
        backendErrorWithin(locks.tryAcquire("refused", options), true, options.requestTimeout(), words);
        Duration wait = options.requestTimeout().plusMillis(500);
        backendErrorWithin(locks.acquire("refused", options.mutate().waitTimeout(wait).build()), true, wait, words);
    }

    /**
     * The blackhole kind: {@code proxy} starts swallowing everything; {@code tryAcquire} fails with a
     * transient "did not answer" within the request timeout, a waiting {@code acquire} at its wait
     * timeout; after healing — the held requests reach the server in order, each grant followed by
     * its owner's release — {@code observer} sees the lock free.
     */
    static void assertBlackholeTimesOutAndLeavesNothingLocked(FaultProxy proxy, LockClient locks, LockOptions options,
                                                              LockClient observer, String backend) {
        proxy.blackhole();
        backendErrorWithin(locks.tryAcquire("blackholed", options), true, options.requestTimeout(),
                backend + " did not answer acquire of lock 'blackholed' within the request timeout");
        Duration wait = options.requestTimeout().plusMillis(500);
        backendErrorWithin(locks.acquire("blackholed", options.mutate().waitTimeout(wait).build()), true, wait,
                "lock 'blackholed'");
        proxy.heal();
        Awaitility.await().atMost(STEP).untilAsserted(() -> assertFree(observer, "blackholed"));
    }

    /** @return a loopback port nobody listens on (bound, then closed): connecting to it is refused */
    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Closes a client, bounded. */
    static void close(LockClient client) {
        if (client != null) {
            client.close().block(STEP);
        }
    }
}
