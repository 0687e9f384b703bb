package io.reactivelocks.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactivelocks.LockListener;
import io.reactivelocks.micrometer.MicrometerLockListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Micrometer meters for the auto-configured client, when {@code reactive-locks-micrometer} is on the classpath.
 * The {@link MeterRegistry} bean is looked up when the client is made (not when conditions are evaluated), so
 * this does not depend on the order of the metrics auto-configurations.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({MeterRegistry.class, MicrometerLockListener.class})
class LockMetricsConfiguration {

    @Bean
    LockListenerFactory reactiveLocksMeters(ObjectProvider<MeterRegistry> registry, ReactiveLocksProperties properties) {
        return store -> {
            MeterRegistry r = properties.isMetricsEnabled() ? registry.getIfUnique() : null;
            return r == null ? LockListener.NONE : new MicrometerLockListener(r, store);
        };
    }
}
