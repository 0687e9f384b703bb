package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/concepts/task-queue.md, run on the in-memory task store. */
class DocsTaskQueueTest {

    static final Duration STEP = Duration.ofSeconds(10);

    // tag::create[]
    TaskQueue tasks = TaskQueue.create(new LocalTaskStore(),      // store.taskQueue(options), store = RedisLocks.connect(redis), ...
            LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build());   // the lease time is the claim time
    // end::create[]

    private final List<String> sent = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() {
        tasks.close().block(STEP);
    }

    @Test
    void registerCaptureProcess() {
        // tag::use[]
        Mono<Boolean> added = tasks.register("emails", "welcome:42", 3, "{\"to\":\"ann@example.com\"}");   // 3 retries
        Disposable workers = tasks.capture("emails")              // each request(n) captures at most n
                .flatMap(claim -> tasks.process(claim, c -> send(c.payload(), c.token())), 8)   // 8 at a time
                .subscribe();
        // end::use[]
        // tag::status[]
        Mono<TaskStatus> status = tasks.status("emails", "welcome:42");   // state, retries left, attempts, token, owner, payload
        // end::status[]
        StepVerifier.create(added).expectNext(true).expectComplete().verify(STEP);
        await().atMost(STEP).until(() -> status.block(STEP).state() == TaskState.DONE);
        assertThat(sent).singleElement().asString().startsWith("{\"to\":\"ann@example.com\"} with fence ");
        workers.dispose();
    }

    private Mono<String> send(String payload, long token) {
        return Mono.fromSupplier(() -> {
            String line = payload + " with fence " + token;
            sent.add(line);
            return line;
        });
    }
}
