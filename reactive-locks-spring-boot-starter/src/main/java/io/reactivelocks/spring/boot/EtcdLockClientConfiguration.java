package io.reactivelocks.spring.boot;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.etcd.EtcdConnectionOptions;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * One store session on the application's jetcd {@link Client} bean — or, when it has none and
 * {@code reactive-locks.etcd.endpoints} is set, on a client the starter makes from the {@code reactive-locks.etcd.*}
 * properties ({@link ClientFromProperties}) — and the lock client, which is also the fair lock bean (etcd's mutex
 * grants waiters in arrival order), each unless the application defines its own; the other concepts come from the
 * session through {@link LockStoreConceptsConfiguration}. etcd has no task queue.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({Client.class, EtcdLocks.class})
@Conditional(OnBackendCondition.Etcd.class)
@Import(EtcdLockClientConfiguration.ClientFromProperties.class)
class EtcdLockClientConfiguration {

    /** The session with etcd every concept below comes from: the client's channel, one session lease for the locks. */
    @Bean
    @ConditionalOnMissingBean(LockStore.class)
    @ConditionalOnBean(Client.class)
    ClosingFactoryBean.Phased<LockStore> reactiveLocksStore(Client etcd, ReactiveLocksProperties properties) {
        return ClosingFactoryBean.store(EtcdLocks.connect(etcd, etcdOptions(properties)), properties.getShutdownTimeout());
    }

    // the mutex grants waiters in arrival order on this store: the fair lock bean is the same client, by its alias
    @Bean(name = {"reactiveLocksClient", ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN})
    @ConditionalOnMissingBean(LockClient.class)
    @ConditionalOnBean(Client.class)
    LockClientFactoryBean reactiveLocksClient(LockStore store, ReactiveLocksProperties properties,
                                              ConceptOptions options) {
        return new LockClientFactoryBean(store, properties, options);
    }

    /**
     * The etcd options from the properties: the key prefix, and the session TTL — the property, else the lease time
     * (at least 1 s, as an {@link EtcdLocks#connect(Client, EtcdLockOptions)} session does), so that the client's
     * leases last what {@code reactive-locks.lease-time} says.
     */
    static EtcdLockOptions etcdOptions(ReactiveLocksProperties properties) {
        ReactiveLocksProperties.Etcd etcd = properties.getEtcd();
        EtcdLockOptions.Builder options = EtcdLockOptions.builder();
        if (etcd.getPrefix() != null) {
            InvalidProperty.check("etcd.prefix", etcd.getPrefix(), () -> options.prefix(etcd.getPrefix()));
        }
        Duration ttl = etcd.getSessionTtl() != null ? etcd.getSessionTtl() : properties.getLeaseTime();
        options.sessionTtl(ttl.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : ttl);
        options.requestTimeout(properties.getRequestTimeout());
        return options.build();
    }

    /**
     * A jetcd {@link Client} from {@code reactive-locks.etcd.endpoints} (and user, password, connect timeout) when the
     * application has none; it connects on the first request and is closed when the context is destroyed, after the
     * lock client released its leases.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = ReactiveLocksProperties.PREFIX + ".etcd", name = "endpoints")
    static class ClientFromProperties {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(Client.class)
        Client reactiveLocksEtcdClient(ReactiveLocksProperties properties) {
            ReactiveLocksProperties.Etcd etcd = properties.getEtcd();
            EtcdConnectionOptions.Builder connection = EtcdConnectionOptions.builder().connectTimeout(etcd.getConnectTimeout());
            InvalidProperty.check("etcd.endpoints", etcd.getEndpoints(),
                    () -> connection.endpoints(etcd.getEndpoints().toArray(new String[0])));
            if (etcd.getUser() != null) {
                InvalidProperty.check("etcd.user", etcd.getUser(),
                        () -> connection.user(etcd.getUser(), etcd.getPassword() == null ? "" : etcd.getPassword()));
            }
            return InvalidProperty.check("etcd.endpoints", etcd.getEndpoints(), connection::build).connect();
        }
    }
}
