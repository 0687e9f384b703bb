package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.local.LocalReadWriteStore;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.task.TaskClaim;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A grant taken away from under a running body (released on the in-memory store by another
 * owner-checked call, so the next renewal finds it gone): the body's thread is interrupted and the
 * scoped call throws {@link LockLostException} — for every scoped verb built on the core's own
 * scoped operation (multi-lock, read-write lock, election, task processing).
 */
class BlockingLossTest {

    private static final long WAIT = 20;
    private static final LockOptions SHORT = LockOptions.builder().leaseTime(Duration.ofSeconds(3))
            .renewalInterval(Duration.ofMillis(100)).build();

    private final LocalLockStore lockStore = new LocalLockStore();
    private final LockClient client = LocalLockBackend.client(lockStore, SHORT);
    private final LocalLockBackend sameStore = new LocalLockBackend(lockStore);

    @AfterEach
    void close() {
        client.close().block(Duration.ofSeconds(WAIT));
    }

    /** Waits (at most {@link #WAIT} seconds) to be interrupted; records whether it was. */
    private static String untilInterrupted(Runnable takeAway, AtomicBoolean interrupted) {
        takeAway.run();
        try {
            new CountDownLatch(1).await(WAIT, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            interrupted.set(true);
        }
        return "ended";
    }

    @Test
    void multiLockBodyIsInterruptedOnLoss() {
        BlockingMultiLock multi = BlockingMultiLock.of(MultiLock.create(client));
        AtomicBoolean interrupted = new AtomicBoolean();
        assertThatThrownBy(() -> multi.withLocks(List.of("a", "b"), set -> untilInterrupted(
                () -> sameStore.release("b", set.lease("b").owner()).block(), interrupted)))
                .isInstanceOf(LockLostException.class);
        assertThat(interrupted).isTrue();
        assertThat(Thread.interrupted()).as("the interrupt for the loss does not outlive the call").isFalse();
    }

    @Test
    void electionBodyIsInterruptedOnLoss() {
        BlockingLeaderElection elections = BlockingLeaderElection.of(LeaderElection.create(client, SHORT));
        AtomicBoolean interrupted = new AtomicBoolean();
        assertThatThrownBy(() -> elections.campaign("leader", "me", term -> untilInterrupted(
                () -> sameStore.release("leader", term.owner()).block(), interrupted)))
                .isInstanceOf(LockLostException.class);
        assertThat(interrupted).isTrue();
    }

    @Test
    void readWriteBodyIsInterruptedOnLoss() {
        LocalReadWriteStore rwStore = new LocalReadWriteStore();
        BlockingReadWriteLock rw = BlockingReadWriteLock.of(ReadWriteLock.create(rwStore, ReadWriteLockOptions.of(SHORT)));
        AtomicBoolean interrupted = new AtomicBoolean();
        assertThatThrownBy(() -> rw.withWriteLock("c", lease -> untilInterrupted(
                () -> rwStore.release("c", lease.owner()).block(), interrupted)))
                .isInstanceOf(LockLostException.class);
        assertThat(interrupted).isTrue();
        rw.close();
    }

    @Test
    void processBodyIsInterruptedWhenTheClaimIsGone() throws Exception {
        try (BlockingStore store = BlockingStore.of(LocalLocks.open())) {
            BlockingTaskQueue tasks = store.taskQueue(SHORT);
            tasks.register("q", "t", 2);
            TaskClaim claim = tasks.tryCapture("q", 1).get(0);
            AtomicBoolean interrupted = new AtomicBoolean();
            assertThatThrownBy(() -> tasks.process(claim, c -> untilInterrupted(() -> {
                try {
                    tasks.remove("q", "t");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, interrupted))).isInstanceOf(LockLostException.class);
            assertThat(interrupted).isTrue();
        }
    }
}
