package io.reactivelocks.test;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Copies what the test JVM writes to {@code System.out} and {@code System.err} (where slf4j-simple, the test
 * logging binding, writes each line it logs) while open, and still passes it on. For tests that count log
 * lines (an outage logs one line when it starts, not one per call); process-wide, so such a test must not
 * run beside others in the same JVM.
 */
public final class LogCapture implements AutoCloseable {

    private final PrintStream out = System.out;
    private final PrintStream err = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    /** Starts copying {@code System.out} and {@code System.err}. */
    public LogCapture() {
        System.setOut(tee(out));
        System.setErr(tee(err));
    }

    private PrintStream tee(PrintStream original) {
        return new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (copy) {
                    copy.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (copy) {
                    copy.write(b, off, len);
                }
                original.write(b, off, len);
            }
        }, true, StandardCharsets.UTF_8);
    }

    /** @return the lines written so far */
    public List<String> lines() {
        synchronized (copy) {
            return Arrays.asList(copy.toString(StandardCharsets.UTF_8).split("\\R"));
        }
    }

    /**
     * @param text what to look for
     * @return how many lines written so far contain {@code text}
     */
    public long count(String text) {
        return lines().stream().filter(l -> l.contains(text)).count();
    }

    /** Stops copying: {@code System.out} and {@code System.err} are what they were before. */
    @Override
    public void close() {
        System.setOut(out);
        System.setErr(err);
    }
}
