package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Makes the auto-configured {@link LockClient} from the store session, with the options and listeners of the
 * application, and closes it (its leases released) in the lifecycle stop phase {@link #PHASE}, as
 * {@link ClosingFactoryBean.Phased} describes.
 */
final class LockClientFactoryBean extends ClosingFactoryBean.Phased<LockClient> {

    /**
     * @param store           the store session
     * @param properties      the options and the shutdown timeout
     * @param listener        the application's {@link LockListener} bean, used if it is unique
     * @param listenerFactory the listener factories (meters, observations, health counts), each used
     */
    LockClientFactoryBean(LockStore store, ReactiveLocksProperties properties, ObjectProvider<LockListener> listener,
                          ObjectProvider<LockListenerFactory> listenerFactory) {
        super(store.locks(properties.toLockOptions(),
                        LockListenerFactory.choose(store.name(), listener.getIfUnique(), listenerFactory.orderedStream().toList())),
                LockClient.class, LockClient::close, "client", properties.getShutdownTimeout());
    }
}
