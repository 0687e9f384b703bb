package io.reactivelocks.spring;

import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.Ordered;

/**
 * The advisor {@link EnableReactiveLocking} registers: its pointcut matches the {@link Locked} and
 * {@link ScheduledLock} methods (checking every one of a bean's class when the bean is proxied), its
 * advice is the {@link LockingInterceptor}. Once the context's singletons exist it resolves the
 * {@code LockClient} and {@code WindowLock} beans of every method found, so that a missing one fails
 * the refresh.
 */
final class LockingAdvisor extends AbstractPointcutAdvisor implements BeanFactoryAware, SmartInitializingSingleton {

    private static final long serialVersionUID = 1L;

    /** The order unless {@link EnableReactiveLocking#order()} says otherwise. */
    static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 1;

    /** The wait timeout of {@code @Locked} calls unless {@link EnableReactiveLocking#waitTimeout()} says otherwise. */
    static final String DEFAULT_WAIT_TIMEOUT = "30s";

    private final transient LockedMethods methods = new LockedMethods();
    private final transient LockingInterceptor interceptor = new LockingInterceptor(methods);
    private final transient Pointcut pointcut = new LockedMethodPointcut(methods);
    private transient @Nullable ListableBeanFactory beans;

    LockingAdvisor() {
        setOrder(DEFAULT_ORDER);
    }

    /**
     * @param waitTimeout the wait timeout of {@code @Locked} calls whose method and client set none, as
     *                    {@link EnableReactiveLocking#waitTimeout()} (placeholders resolved when a method is parsed)
     */
    public void setDefaultWaitTimeout(String waitTimeout) {
        methods.setDefaultWaitTimeout(waitTimeout);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        if (!(beanFactory instanceof ListableBeanFactory listable)) {
            throw new IllegalStateException("@EnableReactiveLocking needs a ListableBeanFactory, got " + beanFactory);
        }
        this.beans = listable;
        methods.setBeanFactory(beanFactory instanceof ConfigurableBeanFactory c ? c : null);
        interceptor.setBeanFactory(listable);
    }

    @Override
    public void afterSingletonsInstantiated() {
        ListableBeanFactory bf = beans;
        if (bf != null) {
            methods.all().forEach(m -> m.resolve(bf));
        }
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }

    /** Matches the annotated methods; its class filter checks all of a class's annotated methods at once. */
    private static final class LockedMethodPointcut extends StaticMethodMatcherPointcut {

        private final LockedMethods methods;

        LockedMethodPointcut(LockedMethods methods) {
            this.methods = methods;
            setClassFilter(new ClassFilter() {
                @Override
                public boolean matches(Class<?> clazz) {
                    return methods.hasLockedMethods(clazz);
                }
            });
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return methods.find(method, targetClass) != null;
        }
    }
}
