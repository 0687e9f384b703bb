package io.reactivelocks.safety;

import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * At most two short-mode classes at once (each runs two or three worker JVMs and a server under
 * faults): a class takes one of two lanes before its first run and gives it back after its last.
 *
 * <p>The lanes are not fixed: whichever short-mode class a test thread picks up next takes the lane that
 * is free. (Fixed lanes as JUnit resource locks left one lane idle for minutes of a loaded build — a
 * thread that picked up a class of the busy lane waited for it while the other lane had nothing to run.)
 * The order in which the classes are handed out does the rest ({@code junit-platform.properties}:
 * the short-mode classes first, longest first, so that the two threads that take them from the front
 * keep both lanes busy while the third works through the light classes from the back); a class that
 * finds both lanes taken all the same waits here for one.
 */
final class SafetyLanes implements BeforeAllCallback, AfterAllCallback {

    private static final Semaphore LANES = new Semaphore(2, true);
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SafetyLanes.class);

    @Override
    public void beforeAll(ExtensionContext context) throws InterruptedException {
        LANES.acquire();
        context.getStore(NS).put("lane", Boolean.TRUE);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getStore(NS).remove("lane") != null) {
            LANES.release();
        }
    }
}
