package io.reactivelocks.internal;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** {@link CleanUpBook}: what a client's close waits for. */
class CleanUpBookTest {

    /**
     * A clean-up that finished is taken off the book by its own thread right after: until then a drain must not
     * wait for its (at once completed) end again and again — that loop recursed until the stack overflowed when the
     * thread was not scheduled (a {@code StackOverflowError} out of a read-write lock contract's close, on a loaded
     * machine). Here the finished clean-up stays listed for good.
     */
    @Test
    void aFinishedCleanUpStillListedIsWaitedForOnce() {
        CleanUpBook book = new CleanUpBook();
        CleanUp finishedButListed = new CleanUp("n", new Registry<>()); // its finish takes it off another registry
        book.registry().add(finishedButListed);
        finishedButListed.finish();
        StepVerifier.create(book.drained()).expectComplete().verify(Duration.ofSeconds(5));
    }

    /** Work registered while a drain waits is waited for too; the drain ends once it ended. */
    @Test
    void workRegisteredWhileDrainingIsWaitedFor() {
        CleanUpBook book = new CleanUpBook();
        Runnable first = book.pending("a");
        Runnable[] second = new Runnable[1];
        StepVerifier.create(book.drained())
                .then(() -> {
                    second[0] = book.pending("b");
                    first.run();
                })
                .expectNoEvent(Duration.ofMillis(50))
                .then(() -> second[0].run())
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }
}
