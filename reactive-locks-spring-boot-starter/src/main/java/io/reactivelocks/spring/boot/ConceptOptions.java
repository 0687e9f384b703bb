package io.reactivelocks.spring.boot;

import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The options every auto-configured concept is handed out with: {@link ReactiveLocksProperties#toLockOptions()} plus
 * the application's listeners (the starter's listener factories — meters, observations, health counts — and the
 * application's single {@link LockListener} bean), so that the lock client, fair lock, semaphore, read-write lock,
 * multi-lock, window lock, election and task queue all report alike (the store session tells the listener which
 * concept each one is).
 */
final class ConceptOptions {

    private final ReactiveLocksProperties properties;
    private final ObjectProvider<LockListener> listener;
    private final ObjectProvider<LockListenerFactory> listenerFactories;
    private final Map<String, LockOptions> byStore = new ConcurrentHashMap<>();

    /**
     * @param properties        the application's options
     * @param listener          the application's {@link LockListener} bean, used if it is unique
     * @param listenerFactories the starter's listener factories, each used
     */
    ConceptOptions(ReactiveLocksProperties properties, ObjectProvider<LockListener> listener,
                   ObjectProvider<LockListenerFactory> listenerFactories) {
        this.properties = properties;
        this.listener = listener;
        this.listenerFactories = listenerFactories;
    }

    /**
     * @param store the name of the store the concepts come from ({@code "redis"}, ...)
     * @return the options, with the listeners for that store (made once per store)
     */
    LockOptions forStore(String store) {
        return byStore.computeIfAbsent(store, s -> properties.toLockOptions().mutate()
                .listener(LockListenerFactory.choose(s, listener.getIfUnique(), listenerFactories.orderedStream().toList()))
                .build());
    }
}
