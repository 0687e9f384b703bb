package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.shedlock.ReactiveLocksLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Scheduled;

/** The ShedLock samples of docs/spring.md, in a Spring context with ShedLock's method proxies on the in-memory store. */
class DocsShedLockTest {

    static final Duration STEP = Duration.ofSeconds(10);

    @Configuration
    @EnableSchedulerLock(defaultLockAtMostFor = "PT30S", interceptMode = EnableSchedulerLock.InterceptMode.PROXY_METHOD)
    static class Config {
        // tag::provider[]
        @Bean
        LockProvider lockProvider(LockClient locks) {              // e.g. RedisLocks.connect(redisClient).locks()
            return new ReactiveLocksLockProvider(locks);
        }
        // end::provider[]

        @Bean
        Reports reports() {
            return new Reports();
        }
    }

    /** A scheduled job guarded by ShedLock. */
    public static class Reports {
        final List<Long> fences = new CopyOnWriteArrayList<>();

        // tag::job[]
        @Scheduled(cron = "0 0 2 * * *")
        @SchedulerLock(name = "nightly-report", lockAtMostFor = "PT30M", lockAtLeastFor = "PT1M")
        public void nightlyReport() {
            long token = ReactiveLocksLockProvider.currentLease().orElseThrow().token();
            writeFenced(token);                                    // the store refuses a smaller token
        }
        // end::job[]

        void writeFenced(long token) {
            fences.add(token);
        }

        List<Long> fences() {
            return fences;
        }
    }

    @Test
    void theJobRunsUnderALease() {
        LockClient locks = LocalLockBackend.client();
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.registerBean(LockClient.class, () -> locks);
            ctx.register(Config.class);
            ctx.refresh();
            Reports reports = ctx.getBean(Reports.class);
            reports.nightlyReport();
            reports.nightlyReport();                               // within lockAtLeastFor: skipped
            assertThat(reports.fences()).hasSize(1);
        } finally {
            locks.close().block(STEP);
        }
    }
}
