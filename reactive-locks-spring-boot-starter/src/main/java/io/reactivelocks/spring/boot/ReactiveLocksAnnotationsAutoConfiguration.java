package io.reactivelocks.spring.boot;

import io.reactivelocks.spring.EnableReactiveLocking;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Configuration;

/**
 * Enables {@link io.reactivelocks.spring.Locked} and {@link io.reactivelocks.spring.ScheduledLock}
 * ({@link EnableReactiveLocking}) when {@code reactive-locks-spring} is on the classpath, unless
 * {@code reactive-locks.annotations.enabled=false}. Beans are proxied by class (CGLIB) unless
 * {@code spring.aop.proxy-target-class=false}, as Spring Boot does for {@code @Transactional}. The annotated methods
 * lock with the application's {@code LockClient} bean (the auto-configured one or its own) and, for
 * {@code lockAtLeastFor}, its {@code WindowLock} bean.
 */
@AutoConfiguration(after = ReactiveLocksAutoConfiguration.class)
@ConditionalOnClass(EnableReactiveLocking.class)
@ConditionalOnBooleanProperty(name = "reactive-locks.annotations.enabled", matchIfMissing = true)
public class ReactiveLocksAnnotationsAutoConfiguration {

    /** Created by Spring Boot's auto-configuration. */
    public ReactiveLocksAnnotationsAutoConfiguration() {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking(proxyTargetClass = true)
    @ConditionalOnBooleanProperty(name = "spring.aop.proxy-target-class", matchIfMissing = true)
    static class ClassProxying {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    @ConditionalOnBooleanProperty(name = "spring.aop.proxy-target-class", havingValue = false)
    static class InterfaceProxying {
    }
}
