package io.reactivelocks.spring;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.window.WindowLock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;

/**
 * What one annotated method needs at each call, parsed and checked once when its bean is proxied: the
 * lock name expression, the publisher kind, the options, and (resolved after the context's singletons
 * are created, or at the first call) the client and window lock beans.
 */
final class LockedMethod {

    /** How the method's result is produced and returned. */
    enum Kind {
        /**
         * returns {@code Mono}, or is a Kotlin suspend function (Spring AOP gives its call as a {@code Mono}):
         * the locked run is adapted back to a {@code Mono}.
         */
        MONO,
        /** returns {@code Flux} or {@code Publisher}, or is a Kotlin suspend function returning a {@code Flow}. */
        FLUX,
        /** returns nothing: a blocking {@link ScheduledLock} method. */
        BLOCKING
    }

    /** How argument names are found, for the lock name's SpEL: {@code -parameters}, or Kotlin's metadata. */
    static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    final Method method;
    final String description;
    final Kind kind;
    final boolean scheduled;
    final Expression name;
    final String clientBean;
    final @Nullable Duration leaseTime;
    /** The method's wait timeout: null when it sets none, negative to wait until cancelled. */
    final @Nullable Duration waitTimeout;
    /** The wait timeout when neither the method nor its client sets one: negative to wait until cancelled. */
    final @Nullable Duration defaultWaitTimeout;
    final Locked.WhenHeld whenHeld;
    final @Nullable Duration lockAtMostFor;
    final @Nullable Duration lockAtLeastFor;
    final String windowLockBean;

    private volatile @Nullable LockClient client;
    private volatile @Nullable LockOptions options;
    private volatile @Nullable WindowLock windowLock;

    LockedMethod(Method method, String description, Kind kind, boolean scheduled, Expression name, String clientBean,
                 @Nullable Duration leaseTime, @Nullable Duration waitTimeout, @Nullable Duration defaultWaitTimeout,
                 Locked.WhenHeld whenHeld, @Nullable Duration lockAtMostFor, @Nullable Duration lockAtLeastFor,
                 String windowLockBean) {
        this.method = method;
        this.description = description;
        this.kind = kind;
        this.scheduled = scheduled;
        this.name = name;
        this.clientBean = clientBean;
        this.leaseTime = leaseTime;
        this.waitTimeout = waitTimeout;
        this.defaultWaitTimeout = defaultWaitTimeout;
        this.whenHeld = whenHeld;
        this.lockAtMostFor = lockAtMostFor;
        this.lockAtLeastFor = lockAtLeastFor;
        this.windowLockBean = windowLockBean;
    }

    /**
     * @return the lock name for these arguments
     * @throws IllegalArgumentException when it evaluates to null
     */
    String lockName(Object[] arguments, ListableBeanFactory beans) {
        MethodBasedEvaluationContext ctx = new MethodBasedEvaluationContext(null, method, arguments, PARAMETER_NAMES);
        ctx.setBeanResolver(new BeanFactoryResolver(beans));
        String value = name.getValue(ctx, String.class);
        if (value == null) {
            throw new IllegalArgumentException("name: the lock name '" + name.getExpressionString() + "' of " + description
                    + " evaluated to null");
        }
        return value;
    }

    LockClient client(ListableBeanFactory beans) {
        LockClient c = client;
        if (c == null) {
            c = bean(beans, LockClient.class, clientBean, "client");
            LockOptions o = c.options();
            // the method's wait timeout, else the client's, else the default: never unbounded unless asked for
            // (a client that waits until cancelled, by choice or not, still gets the bounded default here)
            Duration wait = waitTimeout != null ? waitTimeout
                    : !o.isWaitTimeoutSet() || o.waitTimeout() == null ? defaultWaitTimeout : null;
            if (leaseTime != null || wait != null) {
                LockOptions.Builder b = o.mutate();
                if (leaseTime != null) {
                    b.leaseTime(leaseTime).renewalInterval(null);
                }
                if (wait != null) {
                    b.waitTimeout(wait.isNegative() ? null : wait);
                }
                try {
                    o = b.build();
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(description + ": " + e.getMessage(), e);
                }
            }
            options = o;
            client = c;
        }
        return c;
    }

    /** @return the options of this method's calls (after {@link #client(ListableBeanFactory)}) */
    LockOptions options(ListableBeanFactory beans) {
        client(beans);
        return options;
    }

    @Nullable WindowLock windowLock(ListableBeanFactory beans) {
        if (lockAtLeastFor == null) {
            return null;
        }
        WindowLock w = windowLock;
        if (w == null) {
            w = bean(beans, WindowLock.class, windowLockBean, "windowLock");
            windowLock = w;
        }
        return w;
    }

    /** Resolves the beans now, so that a missing one fails the context's refresh. */
    void resolve(ListableBeanFactory beans) {
        client(beans);
        windowLock(beans);
    }

    private <T> T bean(ListableBeanFactory beans, Class<T> type, String beanName, String attribute) {
        String annotation = scheduled ? "@ScheduledLock" : "@Locked";
        if (!beanName.isEmpty()) {
            if (!beans.containsBean(beanName) || !beans.isTypeMatch(beanName, type)) {
                throw new IllegalStateException(description + " names " + attribute + " = \"" + beanName + "\" but there is no "
                        + type.getSimpleName() + " bean of that name");
            }
            return beans.getBean(beanName, type);
        }
        T unique = beans.getBeanProvider(type).getIfUnique();
        if (unique == null) {
            String[] names = beans.getBeanNamesForType(type);
            throw new IllegalStateException(description + " needs a " + type.getSimpleName() + " bean, but the context has "
                    + (names.length == 0 ? "none"
                            : names.length + " and none is @Primary (" + Arrays.stream(names).collect(Collectors.joining(", ")) + ")")
                    + ": define one, or name one with " + annotation + "(" + attribute + " = \"...\")");
        }
        return unique;
    }
}
