package io.reactivelocks.vertx;

import io.vertx.core.spi.logging.LogDelegate;
import io.vertx.core.spi.logging.LogDelegateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Vert.x's logging SPI for the tests (named by the system property
 * {@code vertx.logger-delegate-factory-class-name} in the pom): keeps every warning and error
 * Vert.x logs in memory, so that tests can assert there were none — in particular no
 * "has been blocked" warning from {@code io.vertx.core.impl.BlockedThreadChecker}. Nothing is
 * written anywhere (no I/O on an event loop); lower levels are dropped.
 */
public final class CapturingLogDelegateFactory implements LogDelegateFactory {

    private static final ConcurrentLinkedQueue<String> WARNINGS = new ConcurrentLinkedQueue<>();

    /** @return and forget the warnings and errors logged so far, each as {@code "logger: message"} */
    static List<String> drain() {
        List<String> out = new ArrayList<>();
        for (String s; (s = WARNINGS.poll()) != null; ) {
            out.add(s);
        }
        return out;
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public LogDelegate createDelegate(String name) {
        return new Delegate(name);
    }

    private record Delegate(String name) implements LogDelegate {

        private void keep(String level, Object message, Throwable t) {
            StringBuilder b = new StringBuilder(level).append(' ').append(name).append(": ").append(message);
            if (t != null) {
                b.append(" (").append(t).append(')');
                StackTraceElement[] stack = t.getStackTrace();
                for (int i = 0; i < Math.min(40, stack.length); i++) {
                    b.append("\n\tat ").append(stack[i]);
                }
            }
            WARNINGS.add(b.toString());
        }

        @Override
        public String implementation() {
            return "capturing";
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isInfoEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return false;
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public void error(Object message) {
            keep("ERROR", message, null);
        }

        @Override
        public void error(Object message, Throwable t) {
            keep("ERROR", message, t);
        }

        @Override
        public void warn(Object message) {
            keep("WARN", message, null);
        }

        @Override
        public void warn(Object message, Throwable t) {
            keep("WARN", message, t);
        }

        @Override
        public void info(Object message) {
        }

        @Override
        public void info(Object message, Throwable t) {
        }

        @Override
        public void debug(Object message) {
        }

        @Override
        public void debug(Object message, Throwable t) {
        }

        @Override
        public void trace(Object message) {
        }

        @Override
        public void trace(Object message, Throwable t) {
        }
    }
}
