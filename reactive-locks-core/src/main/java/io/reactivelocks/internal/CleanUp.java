package io.reactivelocks.internal;

import java.util.function.Consumer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;

/**
 * Store work on one lock that a client's {@code close()} waits for (a release, the request of an
 * ended acquire still in flight), listed in the client's book of clean-ups while it runs; its
 * completion signal is made only if close() asks. Not API.
 */
class CleanUp extends Registry.Member implements Consumer<SignalType> {
    /** The lock the work is on (close() names what it gave up on). */
    final String name;
    private final Registry<CleanUp> book;
    // guarded by this
    private boolean finished;
    // guarded by this
    private Sinks.Empty<Void> done;

    /** The caller adds it to {@code book}; {@link #finish} takes it off. */
    CleanUp(String name, Registry<CleanUp> book) {
        this.name = name;
        this.book = book;
    }

    @Override
    public void accept(SignalType signal) {
        finish();
    }

    void finish() {
        Sinks.Empty<Void> d;
        synchronized (this) {
            finished = true;
            d = done;
        }
        book.remove(this);
        if (d != null) {
            d.tryEmitEmpty();
        }
    }

    Mono<Void> done() {
        synchronized (this) {
            if (finished) {
                return Mono.empty();
            }
            if (done == null) {
                done = Sinks.empty();
            }
            return done.asMono();
        }
    }
}
