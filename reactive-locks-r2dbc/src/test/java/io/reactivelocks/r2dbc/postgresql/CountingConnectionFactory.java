package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * A test double for a backend's listening connection factory
 * ({@link PostgresLockOptions.Builder#listenerConnectionFactory}): hands out the connections of the
 * factory it wraps, unchanged, and counts them — so a test sees how many listening sessions the
 * backend opened without asking the backend.
 */
final class CountingConnectionFactory implements ConnectionFactory {

    private final ConnectionFactory delegate;
    private final AtomicInteger created = new AtomicInteger();

    CountingConnectionFactory(ConnectionFactory delegate) {
        this.delegate = delegate;
    }

    @Override
    public Publisher<? extends Connection> create() {
        return Mono.from(delegate.create()).doOnNext(c -> created.incrementAndGet());
    }

    @Override
    public ConnectionFactoryMetadata getMetadata() {
        return delegate.getMetadata();
    }

    /** @return how many connections were handed out so far */
    int created() {
        return created.get();
    }
}
