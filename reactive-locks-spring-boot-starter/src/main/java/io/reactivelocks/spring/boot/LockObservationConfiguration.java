package io.reactivelocks.spring.boot;

import io.micrometer.observation.ObservationRegistry;
import io.reactivelocks.LockListener;
import io.reactivelocks.micrometer.ObservationLockListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Micrometer observations (spans of waits, holds and renewals, children of the caller's) for the auto-configured
 * client, when {@code reactive-locks-micrometer} is on the classpath and the application has an
 * {@link ObservationRegistry} bean (Boot makes one with the actuator). The registry is looked up when the client is
 * made, so this does not depend on the order of the observation auto-configuration.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ObservationRegistry.class, ObservationLockListener.class})
class LockObservationConfiguration {

    @Bean
    LockListenerFactory reactiveLocksObservations(ObjectProvider<ObservationRegistry> registry,
                                                  ReactiveLocksProperties properties) {
        return store -> {
            ObservationRegistry r = properties.isObservationsEnabled() ? registry.getIfUnique() : null;
            return r == null || r.isNoop() ? LockListener.NONE : new ObservationLockListener(r, store);
        };
    }
}
