package io.reactivelocks.spring;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The advice of {@link Locked} and {@link ScheduledLock} methods. A call evaluates the lock name and
 * returns a lazy publisher; each subscription takes the lock, invokes the method (a fresh clone of the
 * invocation, so a publisher subscribed again, as Spring does for reactive {@code @Scheduled} methods,
 * runs the method again), runs the method's publisher under the lease and releases it on complete,
 * error and cancel.
 */
final class LockingInterceptor implements MethodInterceptor {

    private static final Logger log = Loggers.getLogger(LockingInterceptor.class);

    private final LockedMethods methods;
    private volatile @Nullable ListableBeanFactory beans;

    LockingInterceptor(LockedMethods methods) {
        this.methods = methods;
    }

    void setBeanFactory(ListableBeanFactory beans) {
        this.beans = beans;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        LockedMethod m = methods.find(invocation.getMethod(), target == null ? null : AopUtils.getTargetClass(target));
        ListableBeanFactory bf = beans;
        if (m == null || bf == null) {
            return invocation.proceed();
        }
        String name = m.lockName(invocation.getArguments(), bf);
        if (m.kind == LockedMethod.Kind.BLOCKING) {
            return runBlocking(m, name, invocation, bf);
        }
        Flux<Object> run = Flux.defer(() -> {
            LockClient client = m.client(bf);
            return m.scheduled ? scheduledRun(m, name, client, m.options(bf), m.windowLock(bf), invocation)
                    : lockedRun(m, name, client, m.options(bf), invocation);
        });
        // a Mono's single value is emitted when the run has ended and the lock is released
        return m.kind == LockedMethod.Kind.MONO ? run.singleOrEmpty() : run;
    }

    // ---- @Locked

    private static Flux<Object> lockedRun(LockedMethod m, String name, LockClient client, LockOptions options,
                                          MethodInvocation invocation) {
        return Flux.deferContextual(ctx -> {
            if (LockedContext.held(ctx, client, name) != null) {
                return body(m, invocation); // reentered: the enclosing locked method holds the lease
            }
            if (m.whenHeld == Locked.WhenHeld.WAIT) {
                return client.withLockMany(name, options, lease -> body(m, invocation)
                        .contextWrite(c -> LockedContext.with(c, client, lease, null)));
            }
            Mono<Lease> attempt = client.tryAcquire(name, options);
            if (m.whenHeld == Locked.WhenHeld.FAIL) {
                attempt = attempt.switchIfEmpty(Mono.error(() -> new LockTimeoutException(name, Duration.ZERO)));
            }
            return scoped(attempt, lease -> underLease(lease, body(m, invocation))
                    .contextWrite(c -> LockedContext.with(c, client, lease, null)));
        });
    }

    // ---- @ScheduledLock, reactive

    /*
     * A trigger whose lock cannot be tried (store down, client closed), whose window cannot be claimed or whose lease
     * is lost while it runs is not an error of the job: nobody subscribes to a scheduled run but Spring, which would log
     * each one at WARN with its whole stack trace. Each is one WARN line naming the job, the lock and the reason (the
     * stack trace at DEBUG) — or DEBUG only when the store is unreachable, which the client logs once per outage — and
     * the run completes; errors of the method itself still reach Spring.
     */
    private static Flux<Object> scheduledRun(LockedMethod m, String name, LockClient client, LockOptions options,
                                             @Nullable WindowLock windows, MethodInvocation invocation) {
        Mono<Lease> attempt = client.tryAcquire(name, options)
                .onErrorMap(e -> new SkippedRun("could not try lock '" + name + "'", e))
                .switchIfEmpty(Mono.fromRunnable(() -> log.debug("{}: lock '{}' is held elsewhere, run skipped", m.description, name)));
        return Flux.usingWhen(attempt,
                        lease -> claim(m, name, windows)
                                .flatMapMany(claim -> scheduledUnderLease(m, lease, bounded(m, name, body(m, invocation)))
                                        .contextWrite(c -> LockedContext.with(c, client, lease, claim.orElse(null)))),
                        lease -> quietRelease(m, lease), (lease, e) -> quietRelease(m, lease), lease -> quietRelease(m, lease))
                .onErrorResume(SkippedRun.class, skipped -> {
                    skipped.log(m);
                    return Mono.empty();
                });
    }

    private static Mono<java.util.Optional<WindowClaim>> claim(LockedMethod m, String name, @Nullable WindowLock windows) {
        if (windows == null || m.lockAtLeastFor == null) {
            return Mono.just(java.util.Optional.empty());
        }
        return windows.tryClaim(name, m.lockAtLeastFor)
                .onErrorMap(e -> new SkippedRun("could not claim the window of '" + name + "'", e))
                .map(java.util.Optional::of)
                .switchIfEmpty(Mono.fromRunnable(() -> log.debug("{}: window of '{}' already claimed, run skipped", m.description, name)));
    }

    /**
     * Cancels a scheduled run when its lease is lost, and says so in one line; the run then completes. A run that ends
     * after its lease ended otherwise (released by the client's close at shutdown) is one line too.
     */
    private static Flux<Object> scheduledUnderLease(LockedMethod m, Lease lease, Flux<Object> body) {
        AtomicBoolean lost = new AtomicBoolean();
        return body.takeUntilOther(lease.lost().doOnSuccess(x -> lost.set(true)))
                .concatWith(Mono.fromRunnable(() -> {
                    if (lost.get()) {
                        log.warn("{}: lock '{}' (token {}) was lost while the run was in progress: run cancelled",
                                m.description, lease.name(), lease.token());
                    } else if (!lease.isValid()) {
                        log.warn("{}: lock '{}' (token {}) was no longer held when the run ended (lost, or released by"
                                + " the client's close)", m.description, lease.name(), lease.token());
                    }
                }));
    }

    /** Releases a scheduled run's lease; a failure is one WARN line, as the lease expires by its lease time anyway. */
    private static Mono<Void> quietRelease(LockedMethod m, Lease lease) {
        return lease.release().onErrorResume(e -> {
            warnOneLine(m, "releasing lock '" + lease.name() + "' failed, it expires by its lease time", e);
            return Mono.empty();
        });
    }

    /**
     * One WARN line, the stack trace at DEBUG. A transient store failure (the store down, paused or slow) is DEBUG
     * only: the lock client logs the outage once when it starts and once when it ends (logger
     * {@code io.reactivelocks.outage}), and a job every few hundred milliseconds would repeat it at every trigger.
     */
    private static void warnOneLine(LockedMethod m, String what, Throwable e) {
        if (e instanceof LockBackendException be && be.isTransient()) {
            if (log.isDebugEnabled()) {
                log.debug(m.description + ": " + what + " (the store is unreachable; the lock client logs the outage)", e);
            }
            return;
        }
        log.warn("{}: {}: {} (stack trace at DEBUG)", m.description, what, reason(e));
        if (log.isDebugEnabled()) {
            log.debug(m.description + ": " + what, e);
        }
    }

    /** The exception's own words: its message, else its type. */
    private static String reason(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getName() : message.replace('\n', ' ');
    }

    /** A scheduled run that could not start or finish because of its lock (not because of the job): logged in one line. */
    private static final class SkippedRun extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SkippedRun(String what, Throwable cause) {
            super(what, cause, false, false);
        }

        void log(LockedMethod m) {
            warnOneLine(m, getMessage() + ", run skipped", getCause());
        }
    }

    /** Cancels the run when it goes past {@code lockAtMostFor}, and fails it with a {@link TimeoutException}. */
    private static Flux<Object> bounded(LockedMethod m, String name, Flux<Object> run) {
        Duration atMost = m.lockAtMostFor;
        return Flux.defer(() -> {
            AtomicBoolean late = new AtomicBoolean();
            return run.takeUntilOther(Mono.delay(atMost).doOnNext(x -> late.set(true)))
                    .concatWith(Mono.defer(() -> late.get()
                            ? Mono.error(new TimeoutException(m.description + ": the run under lock '" + name
                                    + "' went past lockAtMostFor " + atMost + " and was cancelled"))
                            : Mono.empty()));
        });
    }

    // ---- @ScheduledLock, blocking

    private static @Nullable Object runBlocking(LockedMethod m, String name, MethodInvocation invocation,
                                                ListableBeanFactory bf) throws Throwable {
        LockClient client = m.client(bf);
        LockOptions options = m.options(bf);
        Duration bound = options.requestTimeout().multipliedBy(3);
        Lease lease;
        try {
            lease = client.tryAcquire(name, options).block(bound);
        } catch (RuntimeException e) { // the store is down or slow, or the client closed: not the job's error
            warnOneLine(m, "could not try lock '" + name + "', run skipped", e);
            return null;
        }
        if (lease == null) {
            log.debug("{}: lock '{}' is held elsewhere, run skipped", m.description, name);
            return null;
        }
        try {
            WindowLock windows = m.windowLock(bf);
            if (windows != null) {
                WindowClaim claim;
                try {
                    claim = windows.tryClaim(name, m.lockAtLeastFor).block(bound);
                } catch (RuntimeException e) {
                    warnOneLine(m, "could not claim the window of '" + name + "', run skipped", e);
                    return null;
                }
                if (claim == null) {
                    log.debug("{}: window of '{}' already claimed, run skipped", m.description, name);
                    return null;
                }
            }
            Watchdog watchdog = new Watchdog(Thread.currentThread());
            Disposable timer = Mono.firstWithSignal(Mono.delay(m.lockAtMostFor).map(x -> "ran past lockAtMostFor " + m.lockAtMostFor),
                            lease.lost().then(Mono.just("lost the lease")))
                    .subscribe(why -> watchdog.interrupt(m, name, why));
            Object result;
            try {
                result = invocation.proceed();
            } finally {
                timer.dispose();
                watchdog.done();
            }
            if (!lease.isValid() && !watchdog.interrupted()) {
                log.warn("{}: lock '{}' (token {}) was no longer held when the run ended (lost, or released by the"
                        + " client's close)", m.description, name, lease.token());
            }
            return result;
        } finally {
            try {
                lease.release().onErrorResume(e -> {
                    warnOneLine(m, "releasing lock '" + name + "' failed, it expires by its lease time", e);
                    return Mono.empty();
                }).block(bound);
            } catch (RuntimeException e) {
                warnOneLine(m, "releasing lock '" + name + "' took longer than " + bound + ", it expires by its lease time", e);
            }
        }
    }

    /** Interrupts a blocking run's thread at most once, and only while the run is in progress. */
    private static final class Watchdog {
        private final Thread thread;
        private boolean running = true;
        private boolean interrupted;

        Watchdog(Thread thread) {
            this.thread = thread;
        }

        synchronized void interrupt(LockedMethod m, String name, String why) {
            if (running && !interrupted) {
                interrupted = true;
                log.warn("{}: the run under lock '{}' {}: interrupting it", m.description, name, why);
                thread.interrupt();
            }
        }

        synchronized boolean interrupted() {
            return interrupted;
        }

        void done() {
            boolean clear;
            synchronized (this) {
                running = false;
                clear = interrupted;
            }
            if (clear) {
                Thread.interrupted(); // the interrupt was ours and the run is over: the scheduler's thread goes back clean
            }
        }
    }

    // ---- shared

    /** Invokes the method (a clone of the invocation, once per subscription) and adapts its result. */
    private static Flux<Object> body(LockedMethod m, MethodInvocation invocation) {
        return Flux.defer(() -> {
            Object result;
            try {
                MethodInvocation call = invocation instanceof ProxyMethodInvocation p ? p.invocableClone() : invocation;
                result = call.proceed();
            } catch (Throwable e) {
                return Flux.error(e);
            }
            if (result == null) {
                return Flux.error(new NullPointerException(m.description + " returned null instead of a publisher"));
            }
            @SuppressWarnings("unchecked")
            Publisher<Object> publisher = (Publisher<Object>) result;
            return Flux.from(publisher);
        });
    }

    /**
     * Runs {@code body} with the lease taken by {@code attempt} (nothing when empty), releasing it on
     * every end; a release the store does not confirm after the body ended keeps the body's result
     * ({@link Lease#releaseAfterWork()}: reported, the lease expires by itself).
     */
    private static Flux<Object> scoped(Mono<Lease> attempt, java.util.function.Function<Lease, Flux<Object>> body) {
        return Flux.usingWhen(attempt, body, Lease::releaseAfterWork, (lease, e) -> lease.releaseAfterWork(), Lease::release);
    }

    /** Cancels {@code body} when the lease is lost, and fails the run then (or when it ended after its deadline). */
    private static Flux<Object> underLease(Lease lease, Flux<Object> body) {
        return body.takeUntilOther(lease.lost())
                .concatWith(Mono.defer(() -> lease.isValid() ? Mono.empty()
                        : Mono.error(new LockLostException(lease.name(), lease.token(), "lost while the locked method ran"))));
    }
}
