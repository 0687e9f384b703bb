package io.reactivelocks.r2dbc;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * Where the statements of a {@link FencedWrites} run: a connection for the length of one piece of
 * work, given back when the work completes, fails or is cancelled.
 */
interface ConnectionSource {

    /**
     * @param work what to do with the connection; lazy
     * @param <T>  what the work emits
     * @return the work's emissions; nothing happens before subscribe
     */
    <T> Flux<T> withConnection(Function<Connection, ? extends Publisher<T>> work);

    /**
     * @param connections a connection factory (a pool, ideally)
     * @return a source that creates a connection per piece of work and closes it after
     */
    static ConnectionSource of(ConnectionFactory connections) {
        return new ConnectionSource() {
            @Override
            public <T> Flux<T> withConnection(Function<Connection, ? extends Publisher<T>> work) {
                return Flux.usingWhen(connections.create(), work, Connection::close);
            }

            @Override
            public String toString() {
                return connections.toString();
            }
        };
    }
}
