package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * A blocking view of a {@link FencedValues} resource: each key keeps the highest token accepted
 * for it, and a write with a lower token is refused. One store request per call; interruption,
 * errors and the refusal on Reactor non-blocking threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingFencedValues values = BlockingFencedValues.of(store.fencedValues());
 * boolean accepted = locks.withLock("config", lease -> values.write("config", lease.token(), json));
 * }</pre>
 */
public final class BlockingFencedValues implements AutoCloseable {

    private final FencedValues values;

    private BlockingFencedValues(FencedValues values) {
        this.values = values;
    }

    /**
     * @param values the reactive fenced values
     * @return a blocking view of them; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code values} when it is null
     */
    public static BlockingFencedValues of(FencedValues values) {
        return new BlockingFencedValues(Objects.requireNonNull(values, "values"));
    }

    /** @return the reactive fenced values underneath */
    public FencedValues fencedValues() {
        return values;
    }

    /**
     * Writes {@code value} under {@code key} if the token is admitted by the key's fence, raising
     * the fence (see {@link FencedValues#write}).
     *
     * @param key   the key
     * @param token the writer's fencing token, e.g. {@code lease.token()}
     * @param value the value
     * @return {@code true} when accepted, {@code false} when a newer writer's token is on the key
     * @throws InterruptedException  when interrupted while waiting: the write may have reached the store
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean write(String key, long token, String value) throws InterruptedException {
        Mono<Boolean> write = values.write(key, token, value);
        Await.refuseNonBlocking("BlockingFencedValues.write");
        return Boolean.TRUE.equals(Await.interruptibly(write, "write", v -> { }));
    }

    /**
     * @param key the key
     * @return the value and its fence, or empty when the key has no value
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<FencedValue> read(String key) throws InterruptedException {
        Mono<FencedValue> read = values.read(key);
        Await.refuseNonBlocking("BlockingFencedValues.read");
        return Optional.ofNullable(Await.interruptibly(read, "read", v -> { }));
    }

    /**
     * Deletes the value of {@code key} if the token is admitted, raising the fence (see {@link FencedValues#delete}).
     *
     * @param key   the key
     * @param token the writer's fencing token
     * @return {@code true} when admitted (whether or not there was a value), {@code false} when refused
     * @throws InterruptedException  when interrupted while waiting: the delete may have reached the store
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean delete(String key, long token) throws InterruptedException {
        Mono<Boolean> delete = values.delete(key, token);
        Await.refuseNonBlocking("BlockingFencedValues.delete");
        return Boolean.TRUE.equals(Await.interruptibly(delete, "delete", v -> { }));
    }

    /** Releases the connections the resource opened (see {@link FencedValues#close}); idempotent. */
    @Override
    public void close() {
        Await.closing(values.close(), "BlockingFencedValues.close");
    }

    /** @return a description naming the resource */
    @Override
    public String toString() {
        return "BlockingFencedValues[" + values + "]";
    }
}
