package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.LockOptions;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskStatus;
import java.util.Collection;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link PostgresTaskQueue}: core's engine over a {@link PostgresTaskStore}, plus {@link #migrate()}. */
final class DefaultPostgresTaskQueue implements PostgresTaskQueue {

    private final PostgresTaskStore store;
    private final TaskQueue tasks;

    DefaultPostgresTaskQueue(PostgresTaskStore store, LockOptions options) {
        this.store = store;
        this.tasks = TaskQueue.create(store, options);
    }

    PostgresTaskStore store() {
        return store;
    }

    @Override
    public Mono<Void> migrate() {
        return store.migrate();
    }

    @Override
    public LockOptions options() {
        return tasks.options();
    }

    @Override
    public Mono<Boolean> register(String queue, String taskId, int retries) {
        return tasks.register(queue, taskId, retries);
    }

    @Override
    public Mono<Boolean> register(String queue, String taskId, int retries, @Nullable String payload) {
        return tasks.register(queue, taskId, retries, payload);
    }

    @Override
    public Mono<Integer> registerAll(String queue, Collection<String> taskIds, int retries) {
        return tasks.registerAll(queue, taskIds, retries);
    }

    @Override
    public Flux<TaskClaim> capture(String queue) {
        return tasks.capture(queue);
    }

    @Override
    public Flux<TaskClaim> tryCapture(String queue, int limit) {
        return tasks.tryCapture(queue, limit);
    }

    @Override
    public Mono<TaskClaim> renew(TaskClaim claim) {
        return tasks.renew(claim);
    }

    @Override
    public Flux<TaskClaim> hold(TaskClaim claim) {
        return tasks.hold(claim);
    }

    @Override
    public Mono<Boolean> complete(TaskClaim claim) {
        return tasks.complete(claim);
    }

    @Override
    public Mono<Boolean> fail(TaskClaim claim) {
        return tasks.fail(claim);
    }

    @Override
    public Mono<Boolean> release(TaskClaim claim) {
        return tasks.release(claim);
    }

    @Override
    public <T> Mono<T> process(TaskClaim claim, Function<? super TaskClaim, ? extends Mono<T>> body) {
        return tasks.process(claim, body);
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        return tasks.status(queue, taskId);
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        return tasks.remove(queue, taskId);
    }

    @Override
    public Mono<Void> close() {
        return tasks.close();
    }

    @Override
    public String toString() {
        return "PostgresTaskQueue{" + store + ", " + tasks.options() + "}";
    }
}
