package io.reactivelocks.docs;

import io.reactivelocks.LockClient;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalWindowStore;
import io.reactivelocks.spring.EnableReactiveLocking;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

// tag::enable[]
@Configuration(proxyBeanMethods = false)
@EnableReactiveLocking                                             // the Spring Boot starter does this for you
public class LockingConfig {
    @Bean(destroyMethod = "")                                      // close() returns a Mono: closed by closeLocks
    LockClient lockClient() {
        return LocalLockBackend.client();                          // store.locks(), store = RedisLocks.connect(redis), ...
    }

    @Bean(destroyMethod = "")
    WindowLock windowLock() {                                      // for @ScheduledLock(lockAtLeastFor = ...)
        return WindowLock.create(new LocalWindowStore());
    }

    @Bean
    DisposableBean closeLocks(LockClient locks, WindowLock windows) {   // releases what is held when the context closes
        return () -> Mono.when(locks.close(), windows.close()).block(Duration.ofSeconds(10));
    }
}
// end::enable[]
