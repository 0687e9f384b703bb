package io.reactivelocks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a {@code @Scheduled} method run on at most one instance at a time, and optionally at most once
 * per window across the fleet. Each run first tries the lock {@link #name()} once, without waiting:
 * an instance that does not get it skips the run. The run then holds a renewed, fenced lease
 * ({@link LockedContext#lease()}) and is cancelled if it runs past {@link #lockAtMostFor()}. With
 * {@link #lockAtLeastFor()}, the run also claims the current window of that length on a
 * {@link io.reactivelocks.window.WindowLock} and is skipped when the window was claimed already.
 * Needs {@link EnableReactiveLocking} (the Spring Boot starter enables it).
 *
 * <pre>{@code
 * @Scheduled(fixedRate = 60_000)
 * @ScheduledLock(name = "restock-report", lockAtMostFor = "5m", lockAtLeastFor = "1h")
 * public Mono<Void> restockReport() {                 // once per hour across every instance
 *     return report.send();
 * }
 * }</pre>
 *
 * <p>Reactive methods ({@code Mono}, {@code Flux}, {@code Publisher}; Spring subscribes to them at every
 * trigger) run entirely under the lock: the method is invoked anew for each run once the lock is held,
 * and its publisher is cancelled when the lease is lost or when it runs past {@code lockAtMostFor} (the
 * run then fails with {@link java.util.concurrent.TimeoutException}, which Spring logs). Kotlin
 * {@code suspend} functions (which Spring runs as a {@code Mono}) are handled the same way, their coroutine
 * cancelled on loss or past {@code lockAtMostFor}. Blocking {@code void} methods
 * are supported too: they run on the scheduler's thread, which waits for the lock's store answers
 * there (they have no Reactor context, so no {@link LockedContext}); past {@code lockAtMostFor}, or on loss,
 * that thread is interrupted (a method that ignores
 * interrupts keeps running, still holding the renewed lease, so never two runs at once). Any other
 * return type is refused when the bean is created, with an error naming the method.
 *
 * <p>What goes wrong with the lock rather than the job is logged as one WARN line naming the method, the
 * lock and the reason, with the stack trace at DEBUG, and the run ends normally: a trigger whose lock or
 * window cannot be tried (store down or slow, client closed) is skipped, a run whose lease is lost is
 * cancelled, a run that ends after its lease ended (released by the client's close at shutdown) and a
 * failed release are reported. A store that is unreachable (down, paused, not answering within the request timeout)
 * is not reported per trigger: the lock client logs one WARN when the outage starts and one INFO when it ends (logger
 * {@code io.reactivelocks.outage}); the skipped runs are at DEBUG. Errors of the method itself reach Spring's
 * scheduler as before.
 *
 * <p>Not the same as ShedLock's {@code @SchedulerLock}: the lock is a renewed lease (a crashed instance
 * frees it within one lease time, not after {@code lockAtMostFor}), and {@code lockAtLeastFor} is a
 * window on the store's clock ({@code floor(store time / lockAtLeastFor)}), not a delay after the run's
 * start: two runs are never in the same window, but two runs on either side of a window boundary may
 * be closer together than {@code lockAtLeastFor}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ScheduledLock {

    /**
     * @return the lock (and window) name: literal text, {@code ${property}} placeholders and
     *         {@code #{...}} SpEL parts as in {@link Locked#value()}; required
     */
    String name();

    /**
     * @return the longest a run may take, as {@code "30s"}, {@code "5m"} or ISO-8601 ({@code "PT5M"}),
     *         {@code ${...}} placeholders allowed: a reactive run still going after it is cancelled, a
     *         blocking one interrupted. The lease itself is the client's lease time, renewed
     */
    String lockAtMostFor();

    /**
     * @return the window: at most one run per window of this length across every instance, on the
     *         store's clock (a whole number of milliseconds, at most 366 days); empty (the default) for no
     *         window, only mutual exclusion. Needs a {@link io.reactivelocks.window.WindowLock} bean
     */
    String lockAtLeastFor() default "";

    /**
     * @return the bean name of the {@link io.reactivelocks.LockClient}; empty for the single one
     */
    String client() default "";

    /**
     * @return the bean name of the {@link io.reactivelocks.window.WindowLock} ({@link #lockAtLeastFor()}
     *         only); empty for the single one
     */
    String windowLock() default "";
}
