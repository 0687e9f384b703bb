package io.reactivelocks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

/**
 * Enables {@link Locked} and {@link ScheduledLock} on the beans of this application context: put it on
 * a {@code @Configuration} class of an application without Spring Boot (the
 * {@code reactive-locks-spring-boot-starter} enables it for Boot applications). It registers Spring's
 * infrastructure auto-proxy creator (as {@code @EnableTransactionManagement} does) and an advisor that
 * proxies every bean with an annotated method. The context needs a {@link io.reactivelocks.LockClient}
 * bean (and a {@link io.reactivelocks.window.WindowLock} bean for {@link ScheduledLock#lockAtLeastFor()}):
 * a missing or ambiguous one fails the context's refresh, naming the method that needs it.
 *
 * <p>A {@link Locked} call never waits unbounded by default: when neither the method's
 * {@link Locked#waitTimeout()} nor its client's default options set a finite wait timeout explicitly
 * ({@link io.reactivelocks.LockOptions#isWaitTimeoutSet()}), it waits at most
 * {@link #waitTimeout()} (30 s unless set here), then fails with {@link io.reactivelocks.LockTimeoutException}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(ReactiveLockingRegistrar.class)
public @interface EnableReactiveLocking {

    /**
     * @return {@code true} to proxy classes (CGLIB) even when a bean implements interfaces;
     *         {@code false} (the default) lets Spring choose, as {@code @EnableTransactionManagement}
     */
    boolean proxyTargetClass() default false;

    /**
     * @return the order of the locking advice among other advice on the same method: by default just
     *         before {@code @Transactional}'s (whose default is {@link Ordered#LOWEST_PRECEDENCE}), so
     *         that the lock is taken before a transaction begins and released after it ends
     */
    int order() default Ordered.LOWEST_PRECEDENCE - 1;

    /**
     * @return how long a {@link Locked} call ({@link Locked.WhenHeld#WAIT}) waits for its lock when neither the
     *         method's {@link Locked#waitTimeout()} nor its client's {@link io.reactivelocks.LockOptions#waitTimeout()}
     *         says: {@code "30s"} by default, in the formats of {@link Locked#waitTimeout()}, {@code ${...}}
     *         placeholders allowed; {@value Locked#UNTIL_CANCELLED} (any negative duration) waits until the call is
     *         cancelled
     */
    String waitTimeout() default "30s";
}
