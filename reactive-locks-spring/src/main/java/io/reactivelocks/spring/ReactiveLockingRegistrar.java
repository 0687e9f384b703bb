package io.reactivelocks.spring;

import java.util.Map;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * What {@link EnableReactiveLocking} registers: Spring's infrastructure auto-proxy creator (or a
 * stronger one already present) and the {@link LockingAdvisor}, both as infrastructure beans.
 */
final class ReactiveLockingRegistrar implements ImportBeanDefinitionRegistrar {

    /** The bean name of the advisor. */
    static final String ADVISOR_BEAN_NAME = "io.reactivelocks.spring.internalLockingAdvisor";

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Map<String, Object> attributes = metadata.getAnnotationAttributes(EnableReactiveLocking.class.getName());
        boolean proxyTargetClass = attributes != null && Boolean.TRUE.equals(attributes.get("proxyTargetClass"));
        int order = attributes != null && attributes.get("order") instanceof Integer o ? o : LockingAdvisor.DEFAULT_ORDER;
        String waitTimeout = attributes != null && attributes.get("waitTimeout") instanceof String w ? w
                : LockingAdvisor.DEFAULT_WAIT_TIMEOUT;
        AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        if (proxyTargetClass) {
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
        if (!registry.containsBeanDefinition(ADVISOR_BEAN_NAME)) {
            RootBeanDefinition advisor = new RootBeanDefinition(LockingAdvisor.class);
            advisor.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
            advisor.getPropertyValues().add("order", order);
            advisor.getPropertyValues().add("defaultWaitTimeout", waitTimeout);
            registry.registerBeanDefinition(ADVISOR_BEAN_NAME, advisor);
        }
    }
}
