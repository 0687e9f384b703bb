package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.multi.MultiLock;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link MultiLock} (a set of names, all or nothing) on the {@link LockClient} bean — the auto-configured one on
 * any store, or the application's — unless the application defines its own. It owns nothing: closing the client
 * releases its leases.
 */
@Configuration(proxyBeanMethods = false)
class MultiLockConfiguration {

    @Bean
    @ConditionalOnBean(LockClient.class)
    @ConditionalOnMissingBean(MultiLock.class)
    MultiLock reactiveLocksMultiLock(LockClient locks) {
        return MultiLock.create(locks);
    }
}
