package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.spi.LockBackend;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Makes the auto-configured {@link LockClient} on a store's backend, with the options and listeners of the
 * application, and closes it (its leases released) in the lifecycle stop phase {@link #PHASE}, as
 * {@link ClosingFactoryBean.Phased} describes.
 */
final class LockClientFactoryBean extends ClosingFactoryBean.Phased<LockClient> {

    /**
     * @param backend        the store's backend
     * @param properties     the options and the shutdown timeout
     * @param listener       the application's {@link LockListener} bean, used if it is unique
     * @param listenerFactory the listener factories (meters, observations, health counts), each used
     */
    LockClientFactoryBean(LockBackend backend, ReactiveLocksProperties properties, ObjectProvider<LockListener> listener,
                          ObjectProvider<LockListenerFactory> listenerFactory) {
        super(LockClient.create(backend, properties.toLockOptions(),
                        LockListenerFactory.choose(backend, listener.getIfUnique(), listenerFactory.orderedStream().toList())),
                LockClient.class, LockClient::close, "client", properties.getShutdownTimeout());
    }
}
