package io.reactivelocks.spring;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Shared by the two application contexts of a test (two instances of one service): counts the runs
 * inside a locked method, the most that were ever inside at once, and the tokens in the order the runs
 * entered.
 */
final class Probe {

    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger maxInside = new AtomicInteger();
    final AtomicInteger invocations = new AtomicInteger();
    final AtomicInteger cancelled = new AtomicInteger();
    final AtomicInteger interrupted = new AtomicInteger();
    final List<Long> tokens = new CopyOnWriteArrayList<>();
    final List<Long> windows = new CopyOnWriteArrayList<>();
    final List<String> instances = new CopyOnWriteArrayList<>();

    void enter(String instance, long token) {
        int now = inside.incrementAndGet();
        maxInside.accumulateAndGet(now, Math::max);
        synchronized (this) {
            tokens.add(token);
            instances.add(instance);
        }
    }

    void exit() {
        inside.decrementAndGet();
    }
}
