package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The lease deadlines of one client on one scheduler: an indexed binary min-heap and one timer,
 * armed for the earliest deadline — instead of one timer per lease, rescheduled on every renewal.
 * Setting, moving and removing a deadline allocates nothing and costs O(log n) under one monitor;
 * a lease released before its deadline leaves nothing behind.
 *
 * <p>The timer calls {@link Node#onDeadline()} outside the monitor, on the scheduler's thread,
 * for every node whose deadline has come; the node checks its own state again (it may have been
 * renewed meanwhile). Lock order: a node's own monitor may be held when calling {@link #set} or
 * {@link #remove}; this heap never calls a node while holding its monitor.
 */
final class DeadlineHeap {

    /** Something with a deadline in this heap. Its fields belong to the heap. */
    abstract static class Node extends Registry.Member {
        // guarded by the heap
        private long due;
        private int index = -1;

        /** The deadline came (maybe after a renewal moved it: the node checks). Not under any lock. */
        abstract void onDeadline();

        /** No timer can watch this node any more (the scheduler refused one): end it now. */
        abstract void onUnwatched();
    }

    private final Scheduler scheduler;
    private final LockClock clock;
    // guarded by this
    private Node[] heap = new Node[16];
    private int size;
    /** The deadline the scheduled timer was armed for, {@code Long.MAX_VALUE} when none is. */
    private long armedFor = Long.MAX_VALUE;
    private Disposable timer;
    private boolean closed;

    DeadlineHeap(Scheduler scheduler, LockClock clock) {
        this.scheduler = scheduler;
        this.clock = clock;
    }

    LockClock clock() {
        return clock;
    }

    /** Sets (or moves) the deadline of {@code node} to {@code due} (a {@link LockClock} reading). */
    void set(Node node, long due) {
        boolean arm;
        synchronized (this) {
            if (node.index < 0) {
                if (size == heap.length) {
                    heap = Arrays.copyOf(heap, size * 2);
                }
                node.due = due;
                node.index = size;
                heap[size++] = node;
                siftUp(node.index);
            } else {
                long old = node.due;
                node.due = due;
                if (due < old) {
                    siftUp(node.index);
                } else {
                    siftDown(node.index);
                }
            }
            arm = !closed && due < armedFor;
            if (arm) {
                armedFor = due;
            }
        }
        if (arm) {
            arm(due);
        }
    }

    /** Takes {@code node} out, if it is in; its timer (if it was the earliest) fires to no effect. */
    void remove(Node node) {
        synchronized (this) {
            int i = node.index;
            if (i < 0) {
                return;
            }
            node.index = -1;
            Node last = heap[--size];
            heap[size] = null;
            if (i < size) {
                heap[i] = last;
                last.index = i;
                siftDown(i);
                siftUp(last.index);
            }
        }
    }

    /** Cancels the timer; the client is closed and its leases ended. */
    void close() {
        Disposable t;
        synchronized (this) {
            closed = true;
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.dispose();
        }
    }

    private void arm(long due) {
        Disposable t;
        try {
            t = scheduler.schedule(() -> fire(due), Math.max(0, due - clock.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException refused) {
            List<Node> all;
            synchronized (this) {
                all = new ArrayList<>(Arrays.asList(heap).subList(0, size));
                for (Node n : all) {
                    n.index = -1;
                }
                Arrays.fill(heap, 0, size, null);
                size = 0;
                armedFor = Long.MAX_VALUE;
            }
            for (Node n : all) {
                n.onUnwatched();
            }
            return;
        }
        Disposable previous = null;
        boolean dispose;
        synchronized (this) {
            // an earlier deadline armed meanwhile supersedes this timer; otherwise it supersedes the last
            dispose = closed || armedFor != due;
            if (!dispose) {
                previous = timer;
                timer = t;
            }
        }
        if (previous != null) {
            previous.dispose();
        }
        if (dispose) {
            t.dispose();
        }
    }

    private void fire(long armedDue) {
        long now = clock.nanoTime();
        List<Node> due = null;
        long next;
        boolean arm;
        synchronized (this) {
            while (size > 0 && heap[0].due <= now) {
                Node n = heap[0];
                remove(n);
                if (due == null) {
                    due = new ArrayList<>(4);
                }
                due.add(n);
            }
            next = size > 0 ? heap[0].due : Long.MAX_VALUE;
            // the armed timer is spent (or fired early): arm one for the next deadline
            if (armedFor == armedDue) {
                armedFor = Long.MAX_VALUE;
                timer = null;
            }
            arm = !closed && next < armedFor;
            if (arm) {
                armedFor = next;
            }
        }
        if (due != null) {
            for (Node n : due) {
                n.onDeadline();
            }
        }
        if (arm) {
            arm(next);
        }
    }

    // ---- the heap, guarded by this

    private void siftUp(int i) {
        Node n = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Node p = heap[parent];
            if (p.due <= n.due) {
                break;
            }
            heap[i] = p;
            p.index = i;
            i = parent;
        }
        heap[i] = n;
        n.index = i;
    }

    private void siftDown(int i) {
        Node n = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && heap[right].due < heap[child].due) {
                child = right;
            }
            if (n.due <= heap[child].due) {
                break;
            }
            heap[i] = heap[child];
            heap[i].index = i;
            i = child;
        }
        heap[i] = n;
        n.index = i;
    }
}
