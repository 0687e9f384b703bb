package io.reactivelocks.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import reactor.core.publisher.Mono;

/**
 * The store work an engine's {@code close()} waits for before it closes its store: releases under
 * way and the requests of ended acquires still in flight (whose grants must be given back). One
 * book per client or engine, shared by every concept's engine so the rule "close after cancel leaves
 * nothing" exists once. Not API.
 */
public final class CleanUpBook {

    private final Registry<CleanUp> book = new Registry<>();

    /** For the engine's own clean-up objects ({@link ServerRelease}). */
    Registry<CleanUp> registry() {
        return book;
    }

    /**
     * Registers work that will end later (a request in flight of an ended acquire).
     *
     * @param name the lock or concept name the work is on
     * @return to run once the work ended (its release, if any, already {@linkplain #tracked registered})
     */
    public Runnable pending(String name) {
        CleanUp c = new CleanUp(name, book);
        book.add(c);
        return c::finish;
    }

    /**
     * @param name the lock or concept name the work is on
     * @param work store work, registered when subscribed, forgotten when it ends or is cancelled
     * @param <T>  its value type
     * @return {@code work}, to be subscribed once
     */
    public <T> Mono<T> tracked(String name, Mono<T> work) {
        return Mono.defer(() -> {
            CleanUp c = new CleanUp(name, book);
            book.add(c);
            return work.doFinally(c);
        });
    }

    /** @return completes when nothing is registered any more (work registered meanwhile is waited for too) */
    public Mono<Void> drained() {
        return drained(newSeen());
    }

    private Mono<Void> drained(Set<CleanUp> seen) {
        return Mono.defer(() -> {
            List<Mono<Void>> pending = unseen(seen);
            return pending.isEmpty() ? Mono.<Void>empty() : Mono.when(pending).then(drained(seen));
        });
    }

    /** @return a set for {@link #unseen}: the clean-ups a drain has waited for */
    static Set<CleanUp> newSeen() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    /**
     * The ends of the registered clean-ups a drain has not waited for yet, each waited for once: a clean-up that
     * finished stays listed until its thread takes it off ({@link CleanUp#finish}), and a drain that waited for it
     * again would loop on its at once completed end — recursing until the stack overflows while that thread is not
     * scheduled (seen on a loaded machine).
     *
     * @param seen the clean-ups waited for so far; those returned now are added
     * @return their ends, errors ignored
     */
    List<Mono<Void>> unseen(Set<CleanUp> seen) {
        List<Mono<Void>> pending = new ArrayList<>();
        for (CleanUp c : book.snapshot()) {
            if (seen.add(c)) {
                pending.add(c.done().onErrorResume(e -> Mono.empty()));
            }
        }
        return pending;
    }

    /** @return the names of the work still registered, sorted, each once */
    public List<String> names() {
        return book.snapshot().stream().map(c -> c.name).distinct().sorted().toList();
    }
}
