package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.context.ApplicationContext;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** Uses every lock bean of a context against its real store: client, window lock, semaphore, election, multi-lock. */
final class StoreBeanChecks {

    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private StoreBeanChecks() {
    }

    /**
     * @param context the started context
     * @param backend the expected backend name in the client's description
     * @return a lease the context's client holds, left for the caller (closing the context must release it)
     */
    static Lease everyConceptWorks(ApplicationContext context, String backend) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        LockClient locks = context.getBean(LockClient.class);
        assertThat(locks.toString()).contains(backend);
        StepVerifier.create(locks.withLock("order-" + run, lease -> Mono.just(lease.token())))
                .assertNext(token -> assertThat(token).isPositive())
                .expectComplete()
                .verify(TIMEOUT);
        Lease kept = locks.acquire("kept-" + run).block(TIMEOUT);
        assertThat(kept).isNotNull();
        assertThat(locks.tryAcquire("kept-" + run).blockOptional(TIMEOUT)).as("held by this client").isEmpty();

        WindowLock windows = context.getBean(WindowLock.class);
        WindowClaim claim = windows.tryClaim("job-" + run, Duration.ofHours(1)).block(TIMEOUT);
        assertThat(claim).isNotNull();
        assertThat(claim.token()).isPositive();
        assertThat(windows.tryClaim("job-" + run, Duration.ofHours(1)).blockOptional(TIMEOUT)).as("once per window").isEmpty();

        Semaphore pool = context.getBean(Semaphore.class);
        Lease permit = pool.tryAcquire("pool-" + run, 1).block(TIMEOUT);
        assertThat(permit).isNotNull();
        assertThat(pool.tryAcquire("pool-" + run, 1).blockOptional(TIMEOUT)).as("N = 1").isEmpty();
        permit.release().block(TIMEOUT);

        ReadWriteLock catalog = context.getBean(ReadWriteLock.class);
        Lease reading = catalog.read().tryAcquire("catalog-" + run).block(TIMEOUT);
        assertThat(reading).isNotNull();
        assertThat(catalog.read().tryAcquire("catalog-" + run).flatMap(l -> l.release().thenReturn(true)).block(TIMEOUT))
                .as("readers share").isTrue();
        assertThat(catalog.write().tryAcquire("catalog-" + run).blockOptional(TIMEOUT)).as("a reader excludes a writer").isEmpty();
        reading.release().block(TIMEOUT);

        LeaderElection elections = context.getBean(LeaderElection.class);
        // read the leader while leading: the campaign is cancelled (it resigns) once the value arrives
        StepVerifier.create(elections.campaign("election-" + run, "me")
                        .concatMap(leading -> elections.leader("election-" + run).map(l -> l.value() + " " + (l.token() == leading.token())))
                        .next())
                .expectNext("me true")
                .expectComplete()
                .verify(TIMEOUT);

        MultiLock multi = context.getBean(MultiLock.class);
        MultiLease both = multi.acquire(List.of("b-" + run, "a-" + run)).block(TIMEOUT);
        assertThat(both.names()).containsExactly("a-" + run, "b-" + run);
        assertThat(both.leases()).allSatisfy(l -> assertThat(l.token()).isPositive());
        both.release().block(TIMEOUT);

        // etcd and ZooKeeper: the mutex is FIFO natively, so the fair lock bean is the lock client under its alias
        assertThat(context.getBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)).as("fair lock bean").isSameAs(locks);
        return kept;
    }

    /**
     * Checks the fair lock client bean of Redis or PostgreSQL: a second client, only injected when qualified, which
     * hands the lock to a waiter on release.
     *
     * @param context the started context
     * @param name    a lock name unique to the test
     * @return a lease the fair client holds, left for the caller (closing the context must release it)
     */
    static Lease fairLockBeanWorks(org.springframework.context.ConfigurableApplicationContext context, String name) {
        LockClient fair = BeanFactoryAnnotationUtils.qualifiedBeanOfType(context.getBeanFactory(), LockClient.class,
                ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN);
        LockClient locks = context.getBeanProvider(LockClient.class).getIfUnique();
        assertThat(locks).as("by type: still the one mutex client").isNotNull().isNotSameAs(fair);
        Lease holder = fair.acquire(name).block(TIMEOUT);
        assertThat(holder).isNotNull();
        assertThat(fair.tryAcquire(name).blockOptional(TIMEOUT)).as("held").isEmpty();
        StepVerifier.create(fair.acquire(name).flatMap(l -> l.release().thenReturn(l.token())))
                .then(() -> holder.release().block(TIMEOUT))
                .assertNext(token -> assertThat(token).as("the waiter's token").isGreaterThan(holder.token()))
                .expectComplete()
                .verify(TIMEOUT);
        Lease kept = fair.acquire(name).block(TIMEOUT);
        assertThat(kept).isNotNull();
        return kept;
    }

    /**
     * Asserts that a fair lock is free on the store after the context that held it closed.
     *
     * @param context a new context on the same store
     * @param name    the lock
     * @param before  the token of the lease the closed context held
     */
    static void fairLockIsFree(org.springframework.context.ConfigurableApplicationContext context, String name, long before) {
        LockClient fair = BeanFactoryAnnotationUtils.qualifiedBeanOfType(context.getBeanFactory(), LockClient.class,
                ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN);
        StepVerifier.create(fair.tryAcquire(name).flatMap(l -> l.release().thenReturn(l.token())))
                .assertNext(token -> assertThat(token).as("released when the first context closed").isGreaterThan(before))
                .expectComplete()
                .verify(TIMEOUT);
    }

    /**
     * Asserts that a lock is free on the store, taking it with a client of another context and giving it back.
     *
     * @param other a client on the same store (and key prefix or root)
     * @param name  the lock
     */
    static void isFree(LockClient other, String name) {
        StepVerifier.create(other.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)))
                .expectNext(true)
                .expectComplete()
                .verify(TIMEOUT);
    }
}
