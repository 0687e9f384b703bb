package io.reactivelocks.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A client's book of live objects (held leases, acquires in progress, clean-ups under way): a
 * doubly linked list through the members' own fields under one monitor. Adding and removing
 * allocate nothing (a {@code ConcurrentHashMap} key set allocates a node per add and was the
 * largest CPU item of an acquire + release on a store that answers at once); reading the members
 * copies them. Each member is in at most one registry.
 *
 * @param <T> the members
 */
final class Registry<T extends Registry.Member> {

    /** Something a registry can hold. Its fields belong to the registry. */
    abstract static class Member {
        // guarded by the registry
        Member prev;
        Member next;
        boolean listed;
    }

    // guarded by this
    private Member head;
    private int size;

    /** Adds {@code m} (no effect if it is in already). */
    synchronized void add(T m) {
        if (m.listed) {
            return;
        }
        m.listed = true;
        m.prev = null;
        m.next = head;
        if (head != null) {
            head.prev = m;
        }
        head = m;
        size++;
    }

    /** Removes {@code m} (no effect if it is not in). */
    synchronized void remove(T m) {
        if (!m.listed) {
            return;
        }
        m.listed = false;
        Member p = m.prev;
        Member n = m.next;
        if (p == null) {
            head = n;
        } else {
            p.next = n;
        }
        if (n != null) {
            n.prev = p;
        }
        m.prev = null;
        m.next = null;
        size--;
    }

    synchronized int size() {
        return size;
    }

    synchronized boolean isEmpty() {
        return size == 0;
    }

    /** @return the members now, newest first */
    @SuppressWarnings("unchecked")
    synchronized List<T> snapshot() {
        List<T> all = new ArrayList<>(size);
        for (Member m = head; m != null; m = m.next) {
            all.add((T) m);
        }
        return all;
    }
}
