package io.reactivelocks.spring;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Copies what the test JVM writes to {@code System.out} and {@code System.err} (where slf4j-simple, the test
 * logging binding, writes each line it logs) while open, and still passes it on.
 */
final class LogCapture implements AutoCloseable {

    private final PrintStream out = System.out;
    private final PrintStream err = System.err;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    LogCapture() {
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
    List<String> lines() {
        synchronized (copy) {
            return Arrays.asList(copy.toString(StandardCharsets.UTF_8).split("\\R"));
        }
    }

    /** @return how many lines written so far contain {@code text} */
    long count(String text) {
        return lines().stream().filter(l -> l.contains(text)).count();
    }

    @Override
    public void close() {
        System.setOut(out);
        System.setErr(err);
    }
}
