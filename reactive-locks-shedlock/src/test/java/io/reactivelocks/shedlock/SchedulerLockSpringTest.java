package io.reactivelocks.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code @SchedulerLock} in a small Spring context, with this provider as its only {@link LockProvider}. */
class SchedulerLockSpringTest {

    static final String JOB = "nightly-report";

    @Test
    void aSchedulerLockMethodRunsUnderALeaseAndAConcurrentCallIsSkipped() throws Exception {
        RedisShedLock redis = RedisShedLock.shared();
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
            context.registerBean(RedisShedLock.class, () -> redis);
            context.register(Config.class);
            context.refresh();
            Job job = context.getBean(Job.class);

            job.run(() -> {
                // while the first run holds the lock, a run on another thread is skipped
                CompletableFuture.runAsync(() -> job.run(() -> { })).get(10, TimeUnit.SECONDS);
                LockState.Held held = (LockState.Held) redis.state(JOB);
                assertThat(held.token()).isEqualTo(job.tokens().get(0));
            });
            job.run(() -> { });

            assertThat(job.tokens()).hasSize(2);
            assertThat(job.tokens().get(1)).isGreaterThan(job.tokens().get(0));
            assertThat(redis.state(JOB)).isInstanceOf(LockState.Free.class);
        }
    }

    /** The application's configuration: one provider, ShedLock's method proxies. */
    @Configuration
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S", interceptMode = EnableSchedulerLock.InterceptMode.PROXY_METHOD)
    static class Config {
        @Bean
        LockProvider lockProvider(RedisShedLock redis) {
            return new ReactiveLocksLockProvider(redis.client);
        }

        @Bean
        Job job() {
            return new Job();
        }
    }

    /** A scheduled job guarded by ShedLock. */
    static class Job {
        private final List<Long> tokens = new CopyOnWriteArrayList<>();

        /** @return the tokens of the runs so far (a method: the Spring proxy delegates it to the bean) */
        public List<Long> tokens() {
            return tokens;
        }

        /** @param whileHolding what to do while the lock is held */
        @SchedulerLock(name = JOB)
        public void run(ThrowingRunnable whileHolding) {
            Lease lease = ReactiveLocksLockProvider.currentLease().orElseThrow();
            tokens.add(lease.token());
            try {
                whileHolding.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A runnable that may throw. */
    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
