package io.reactivelocks.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockTimeoutException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class BackendErrorsTest {

    private final BackendErrors errors = BackendErrors.of("store", e -> e instanceof IllegalStateException);

    @Test
    void aLockExceptionPassesUnchangedEvenInsideAFutureWrapper() {
        LockException timeout = new LockTimeoutException("a", Duration.ofSeconds(1));
        assertThat(errors.map("a", "acquire", timeout)).isSameAs(timeout);
        assertThat(errors.map("a", "acquire", new CompletionException(timeout))).isSameAs(timeout);
    }

    @Test
    void aTimeoutIsATransientNoAnswer() {
        LockException e = errors.map("a", "acquire", new TimeoutException());
        assertThat(e).isInstanceOf(LockBackendException.class)
                .hasMessage("store did not answer acquire of lock 'a' within the request timeout");
        assertThat(((LockBackendException) e).isTransient()).isTrue();
        assertThat(e.lockName()).isEqualTo("a");
        assertThat(BackendErrors.isTransient(e)).isTrue();
    }

    @Test
    void theStoresRuleDecidesTransienceOfTheUnwrappedError() {
        LockException e = errors.map("a", "release", new CompletionException(new IllegalStateException("busy")));
        assertThat(e).hasMessage("store failed release of lock 'a': java.lang.IllegalStateException: busy")
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(BackendErrors.isTransient(e)).isTrue();
        LockException permanent = errors.map(null, "renewal", new IllegalArgumentException("no"));
        assertThat(permanent).hasMessage("store failed renewal: java.lang.IllegalArgumentException: no");
        assertThat(permanent.lockName()).isNull();
        assertThat(BackendErrors.isTransient(permanent)).isFalse();
    }

    @Test
    void theMessageNamesTheInnermostCauseOrTheStoresOwnDetail() {
        RuntimeException wrapped = new RuntimeException("unable to connect", new IOException("connection refused"));
        assertThat(errors.map("a", "acquire", wrapped)).hasMessage("store failed acquire of lock 'a': "
                + "java.lang.RuntimeException: unable to connect (cause: IOException: connection refused)");
        assertThat(errors.describedBy(e -> "[42] " + e.getMessage()).map("a", "acquire", wrapped))
                .hasMessage("store failed acquire of lock 'a': [42] unable to connect");
        assertThat(errors.mapQueue("q", "task capture", new IllegalArgumentException("x")))
                .hasMessage("store failed task capture of task queue 'q': java.lang.IllegalArgumentException: x")
                .extracting(LockException::lockName).isEqualTo("q");
    }

    @Test
    void theSharedRuleCallsIoErrorsAndTimeoutsTransient() {
        assertThat(BackendErrors.isTransient(BackendErrors.map("store", "a", "acquire", new IOException()))).isTrue();
        assertThat(BackendErrors.isTransient(BackendErrors.map("store", "a", "acquire",
                new RuntimeException(new TimeoutException())))).isTrue();
        assertThat(BackendErrors.isTransient(BackendErrors.map("store", "a", "acquire", new RuntimeException("bug"))))
                .isFalse();
        assertThat(BackendErrors.isIoOrTimeout(new RuntimeException(new RuntimeException(new IOException())))).isTrue();
        assertThat(BackendErrors.hasCause(new IOException(), IOException.class)).isFalse();
    }
}
