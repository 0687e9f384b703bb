package io.reactivelocks.safety.badinput;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockState;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
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

    /** Closes a client, bounded. */
    static void close(LockClient client) {
        if (client != null) {
            client.close().block(STEP);
        }
    }

    /** @return {@code s} repeated {@code n} times */
    static String repeat(String s, int n) {
        return s.repeat(n);
    }
}
