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
 * {@code lockAtLeastFor}, its {@code WindowLock} bean. A {@code @Locked} call whose method and client set no wait
 * timeout waits {@code reactive-locks.wait-timeout} (30 s unless set; {@code -1} waits until cancelled).
 */
@AutoConfiguration(after = ReactiveLocksAutoConfiguration.class)
@ConditionalOnClass(EnableReactiveLocking.class)
@ConditionalOnBooleanProperty(name = "reactive-locks.annotations.enabled", matchIfMissing = true)
public class ReactiveLocksAnnotationsAutoConfiguration {

    /** The annotations' default wait timeout: the one the auto-configured client waits. */
    static final String WAIT_TIMEOUT = "${" + ReactiveLocksProperties.PREFIX + ".wait-timeout:30s}";

    /** Created by Spring Boot's auto-configuration. */
    public ReactiveLocksAnnotationsAutoConfiguration() {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking(proxyTargetClass = true, waitTimeout = WAIT_TIMEOUT)
    @ConditionalOnBooleanProperty(name = "spring.aop.proxy-target-class", matchIfMissing = true)
    static class ClassProxying {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking(waitTimeout = WAIT_TIMEOUT)
    @ConditionalOnBooleanProperty(name = "spring.aop.proxy-target-class", havingValue = false)
    static class InterfaceProxying {
    }
}
