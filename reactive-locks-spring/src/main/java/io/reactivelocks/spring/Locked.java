package io.reactivelocks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs a reactive method of a Spring bean under a distributed lock: each subscription to the
 * returned publisher first acquires the lock (through {@link io.reactivelocks.LockClient#withLock
 * LockClient.withLock} / {@code withLockMany}), then invokes the method, and releases the lock when the
 * method's publisher completes, fails or is cancelled. Needs {@link EnableReactiveLocking} (the
 * Spring Boot starter enables it).
 *
 * <pre>{@code
 * @Locked("stock:#{#sku}")                        // one lock per sku, across every instance
 * public Mono<Reservation> reserve(String sku, long qty) {
 *     return LockedContext.lease().flatMap(lease -> stock.write(sku, qty, lease.token()));
 * }
 * }</pre>
 *
 * <p>The method must return {@code Mono}, {@code Flux} or {@code Publisher}, or be a Kotlin
 * {@code suspend} function: anything else (including {@code void}) is refused when the bean is
 * created, with an error naming the method. The method itself is invoked only once the lock is held
 * (so even its eager code runs under the lock), once per subscription.
 *
 * <p>Spring AOP calls a {@code suspend} function as a cold {@code Mono} (a {@code Flux} when it returns
 * a {@code Flow}) and turns the advice's result back into the suspend result, so it is locked exactly
 * like a {@code Mono} method: the coroutine starts once the lock is held, is cancelled when the lease
 * is lost (the call then throws {@link io.reactivelocks.LockLostException}), and {@link WhenHeld#SKIP}
 * returns {@code null}. The lease reaches the coroutine in its {@code ReactorContext}:
 * {@code LockedContext.lease().awaitSingle()}. Needs {@code kotlin-reflect} and
 * {@code kotlinx-coroutines-reactor} on the classpath.
 *
 * <p>While it runs, the lease is in the Reactor {@code Context} of the method's publisher:
 * {@link LockedContext#lease()}. If the lease is lost (its renewal failed past its validity, or the
 * store says it is someone else's now), the method's publisher is cancelled and the call fails with
 * {@link io.reactivelocks.LockLostException}. Reentrant: a nested {@code @Locked} method (or a
 * {@code withLock}) on the same name and client in the same reactive chain reuses the held lease.
 * Proxy-based, like {@code @Transactional}: a call from inside the same object is not intercepted.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {

    /**
     * The wait timeout that waits until the call is cancelled, for {@link #waitTimeout()} and
     * {@link EnableReactiveLocking#waitTimeout()}: {@value}, as any negative duration.
     */
    String UNTIL_CANCELLED = "-1";

    /**
     * The lock name: a template of literal text and SpEL expressions in {@code #{...}} over the
     * method's arguments ({@code #sku} with {@code -parameters}, or {@code #p0} / {@code #a0} always),
     * beans ({@code @bean}) and {@code ${property}} placeholders resolved at startup. Examples:
     * {@code "nightly-report"}, {@code "stock:#{#sku}"}, {@code "order:#{#p0.id()}"}. Evaluated when the
     * method is called; a result that is not a valid lock name fails the call with
     * {@code IllegalArgumentException}. A variable the method cannot name ({@code #sku} in a class compiled
     * without {@code -parameters}, a misspelt name, {@code #p2} of a one-argument method) fails the bean's
     * creation, naming the method and the variable: it would otherwise evaluate to {@code null} and lock the same
     * name for every call.
     *
     * @return the lock name template (alias of {@link #name()})
     */
    @AliasFor("name")
    String value() default "";

    /**
     * @return the lock name template (alias of {@link #value()}); one of the two is required
     */
    @AliasFor("value")
    String name() default "";

    /**
     * @return the bean name of the {@link io.reactivelocks.LockClient} to lock with; empty (the default)
     *         for the application's single (or {@code @Primary}) {@code LockClient} bean
     */
    String client() default "";

    /**
     * @return the lease time of this lock, as {@code "30s"}, {@code "500ms"}, {@code "2m"} or ISO-8601
     *         ({@code "PT30S"}), {@code ${...}} placeholders allowed; empty (the default) for the client's
     *         ({@link io.reactivelocks.LockOptions#leaseTime()}). The lease is renewed every third of it
     */
    String leaseTime() default "";

    /**
     * @return how long to wait for the lock ({@link WhenHeld#WAIT} only), in the same formats as
     *         {@link #leaseTime()}; {@value #UNTIL_CANCELLED} (any negative duration) to wait until the call is
     *         cancelled; empty (the default) for the client's ({@link io.reactivelocks.LockOptions#waitTimeout()})
     *         when the client set a finite one explicitly, else {@link EnableReactiveLocking#waitTimeout()} (30 s unless
     *         set there). Past it the call fails with {@link io.reactivelocks.LockTimeoutException}
     */
    String waitTimeout() default "";

    /**
     * @return what a call does when the lock is held by someone else: wait (the default), skip the
     *         method, or fail
     */
    WhenHeld whenHeld() default WhenHeld.WAIT;

    /** What a {@link Locked} call does when another owner holds the lock. */
    enum WhenHeld {

        /** Waits for the lock (up to {@link Locked#waitTimeout()}), then runs the method. */
        WAIT,

        /**
         * One attempt ({@link io.reactivelocks.LockClient#tryAcquire tryAcquire}): when the lock is held,
         * the method is not invoked and the call completes empty.
         */
        SKIP,

        /**
         * One attempt: when the lock is held, the method is not invoked and the call fails with
         * {@link io.reactivelocks.LockTimeoutException} (a wait timeout of zero).
         */
        FAIL
    }
}
