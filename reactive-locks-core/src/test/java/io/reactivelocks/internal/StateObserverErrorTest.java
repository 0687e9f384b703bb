package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockBackendException;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

/**
 * An observation re-reads the state on each trigger ({@code switchMap}); when the triggers (the
 * store's change stream) and the read in progress fail at once, Reactor combines both into one
 * composite, which is not the typed error an observer is promised (a loaded run of
 * {@code GarbageServerTest} saw it on Redis). The stream ends with the typed one.
 */
class StateObserverErrorTest {

    @Test
    void aCompositeOfTheTriggersAndTheReadEndsWithTheTypedError() {
        LockBackendException typed = new LockBackendException("n", "redis failed inspect", null, true);
        IOException raw = new IOException("connection reset");
        Throwable both = Exceptions.multiple(raw, typed);
        assertThat(Exceptions.isMultiple(both)).isTrue();
        assertThat(StateObserver.oneError(both)).isSameAs(typed);
    }

    @Test
    void withoutATypedErrorTheFirstOneAndASingleErrorAsItIs() {
        IOException first = new IOException("first");
        IllegalStateException second = new IllegalStateException("second");
        assertThat(StateObserver.oneError(Exceptions.multiple(first, second))).isSameAs(first);
        assertThat(StateObserver.oneError(second)).isSameAs(second);
    }
}
