package io.reactivelocks.multi;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.multi.DefaultMultiLock;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Takes a set of lock names all or nothing, on any {@link LockClient} (so on every store).
 *
 * <pre>{@code
 * MultiLock multi = MultiLock.create(locks);             // locks: a LockClient on any store
 * multi.withLocks(List.of("account:7", "account:3"), set ->
 *         transfer(7, 3, set.token("account:7"), set.token("account:3")))
 *      .subscribe();
 * }</pre>
 *
 * <p><b>Order.</b> Names are taken one by one in one canonical order — sorted by their UTF-8 bytes
 * (unsigned), whatever order the caller gives — so two callers that need overlapping sets can
 * never deadlock (no ABBA): both wait for the lowest name first. <b>Duplicates</b> are collapsed:
 * the names are a set, and the {@link MultiLease} has one lease per distinct name.
 *
 * <p><b>All or nothing.</b> While the later names are awaited, the earlier ones are held (and
 * renewed). A cancel, a timeout or an error half-way releases every lease taken so far, and an
 * acquire of the client that is in flight at that moment releases whatever its request gets (the
 * {@link LockClient#acquire} rules). The wait timeout of the options bounds the whole set: each
 * name waits at most what is left of it. Each name's lease has its own fencing token.
 *
 * <p>Arguments are checked at call time: a {@code null} collection or name throws
 * {@link NullPointerException}, an empty collection or an invalid name
 * {@link IllegalArgumentException}, naming the argument.
 */
public interface MultiLock {

    /**
     * @param client the lock client whose locks are taken (and whose default options are used)
     * @return a multi-lock over {@code client}; it holds no resources of its own (close the client)
     * @throws NullPointerException when {@code client} is null
     */
    static MultiLock create(LockClient client) {
        return new DefaultMultiLock(client);
    }

    /**
     * The canonical order every multi-lock takes names in.
     *
     * @param names lock names in any order, possibly repeated
     * @return the distinct names sorted by their UTF-8 bytes (unsigned)
     * @throws NullPointerException     naming the argument when {@code names} or one of them is null
     * @throws IllegalArgumentException naming the argument when {@code names} is empty or a name
     *                                  is empty or over 1024 UTF-8 bytes
     */
    static List<String> canonicalOrder(Collection<String> names) {
        Objects.requireNonNull(names, "names");
        if (names.isEmpty()) {
            throw new IllegalArgumentException("names must not be empty");
        }
        TreeMap<byte[], String> sorted = new TreeMap<>(Arrays::compareUnsigned);
        int i = 0;
        for (String n : names) {
            LockNames.check(n, "names[" + i++ + "]");
            sorted.putIfAbsent(LockNames.utf8(n), n);
        }
        return List.copyOf(sorted.values());
    }

    /** @return the client the locks are taken with */
    LockClient client();

    /**
     * Acquires every name with the client's default options (see {@link #acquire(Collection, LockOptions)}).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @return a {@code Mono} of the granted set
     */
    default Mono<MultiLease> acquire(Collection<String> names) {
        return acquire(names, client().options());
    }

    /**
     * Acquires every name, one by one in the canonical order, waiting for each like
     * {@link LockClient#acquire(String, LockOptions)}. Emits the set once all are held; always
     * {@link MultiLease#release()} it, or prefer {@link #withLocks}. Cancel, error or timeout
     * half-way releases what was taken. Errors: {@link io.reactivelocks.LockTimeoutException}
     * when the wait timeout (for the whole set) ends, naming the name being awaited;
     * {@link io.reactivelocks.LockBackendException}; {@link io.reactivelocks.LockClientClosedException}.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return a {@code Mono} of the granted set
     */
    Mono<MultiLease> acquire(Collection<String> names, LockOptions options);

    /**
     * One attempt per name with the client's default options (see {@link #tryAcquire(Collection, LockOptions)}).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @return the set, or empty when a name is held by someone else
     */
    default Mono<MultiLease> tryAcquire(Collection<String> names) {
        return tryAcquire(names, client().options());
    }

    /**
     * All or nothing without waiting: tries each name once in the canonical order; emits the set
     * when every name was granted, else releases what it took and completes empty. Cancel
     * releases what was taken. Errors like {@link #acquire(Collection, LockOptions)} (after
     * releasing what was taken).
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the set, or empty when a name is held by someone else
     */
    Mono<MultiLease> tryAcquire(Collection<String> names, LockOptions options);

    /**
     * Runs {@code body} under every lock with the client's default options (see
     * {@link #withLocks(Collection, LockOptions, Function)}).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param body  the work to do while holding every lock
     * @param <T>   the body's result type
     * @return the body's result
     */
    default <T> Mono<T> withLocks(Collection<String> names, Function<? super MultiLease, ? extends Mono<T>> body) {
        return withLocks(names, client().options(), body);
    }

    /**
     * Scoped use: acquires the set, runs {@code body}, releases every lease on complete, error and
     * cancel. If any lease is lost while the body runs, the body is cancelled and the result is
     * {@link io.reactivelocks.LockLostException} naming that lock. Reentrant like
     * {@link LockClient#withLock}: a name already held by an enclosing {@code withLock} or
     * {@code withLocks} of the same client in the same chain is reused, not taken again.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease taken (ignored for reentered names)
     * @param body    the work to do while holding every lock
     * @param <T>     the body's result type
     * @return the body's result
     */
    <T> Mono<T> withLocks(Collection<String> names, LockOptions options, Function<? super MultiLease, ? extends Mono<T>> body);

    /**
     * Streaming variant of {@link #withLocks(Collection, LockOptions, Function)}: the set is held
     * until the body's stream terminates or is cancelled; a loss cancels the body and ends the
     * stream with {@link io.reactivelocks.LockLostException}.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease taken (ignored for reentered names)
     * @param body    the streaming work to do while holding every lock
     * @param <T>     the element type
     * @return the body's elements
     */
    <T> Flux<T> withLocksMany(Collection<String> names, LockOptions options, Function<? super MultiLease, ? extends Publisher<T>> body);

    /**
     * Holds the set as a stream with the client's default options (see {@link #hold(Collection, LockOptions)}).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @return the hold stream
     */
    default Flux<MultiLease> hold(Collection<String> names) {
        return hold(names, client().options());
    }

    /**
     * Acquires the set (waiting like {@link #acquire(Collection, LockOptions)}), emits it once,
     * and completes when any of its leases is lost (the others are then released). Its
     * {@link MultiLease#remaining()} follows the renewals. Cancelling releases every lease.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the hold stream
     */
    Flux<MultiLease> hold(Collection<String> names, LockOptions options);
}
