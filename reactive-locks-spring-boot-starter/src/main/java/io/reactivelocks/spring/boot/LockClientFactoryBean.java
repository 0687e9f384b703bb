package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;

/**
 * Makes the auto-configured {@link LockClient} from the store session, with the options and listeners of the
 * application, and closes it (its leases released) in the lifecycle stop phase {@link #PHASE}, as
 * {@link ClosingFactoryBean.Phased} describes.
 */
final class LockClientFactoryBean extends ClosingFactoryBean.Phased<LockClient> {

    /**
     * @param store      the store session
     * @param properties the shutdown timeout
     * @param options    the options and listeners of every auto-configured concept
     */
    LockClientFactoryBean(LockStore store, ReactiveLocksProperties properties, ConceptOptions options) {
        super(store.locks(options.forStore(store.name())),
                LockClient.class, LockClient::close, "client", properties.getShutdownTimeout());
    }
}
