package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Spring Boot's actuator on the classpath: the {@code reactiveLocks} health indicator on the {@link LockClient}
 * bean ({@code spring-boot-health}; switch it off with {@code management.health.reactivelocks.enabled=false}) and the
 * {@code reactivelocks} endpoint ({@code spring-boot-actuator}).
 */
@Configuration(proxyBeanMethods = false)
class ReactiveLocksActuatorConfiguration {

    /** The health indicator and the counts it reports. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ReactiveHealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("reactivelocks")
    static class Health {

        @Bean
        LockActivityCounts reactiveLocksActivityCounts() {
            return new LockActivityCounts();
        }

        @Bean(name = "reactiveLocksHealthIndicator")
        @ConditionalOnBean(LockClient.class)
        @ConditionalOnMissingBean(name = "reactiveLocksHealthIndicator")
        ReactiveHealthIndicator reactiveLocksHealthIndicator(LockClient client, ObjectProvider<LockActivityCounts> counts,
                                                             ReactiveLocksProperties properties) {
            return new LockClientHealthIndicator(client, counts.getIfAvailable(), properties.getHealth().getProbeName(),
                    properties.getHealth().getTimeout());
        }
    }

    /** The endpoint. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    static class Endpoints {

        @Bean
        @ConditionalOnBean(LockClient.class)
        @ConditionalOnMissingBean(ReactiveLocksEndpoint.class)
        ReactiveLocksEndpoint reactiveLocksEndpoint(Map<String, LockClient> clients, ObjectProvider<LockStore> store) {
            return new ReactiveLocksEndpoint(clients, store.getIfUnique());
        }
    }
}
