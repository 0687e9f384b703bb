package io.reactivelocks.examples.webflux;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.MissingRowException;
import java.util.Objects;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;

/**
 * The {@code stock(sku, available, fence)} table. Every write is fenced: it carries the fencing
 * token of the writer's lease and is applied only when that token is greater than the row's
 * {@code fence}, so a writer whose lease was lost and superseded cannot overwrite a newer writer.
 * Reads are plain. All methods are lazy (nothing runs before subscribe) and never block.
 */
@Repository
public class StockRepository {

    private final DatabaseClient db;
    private final FencedWrites writes;

    /**
     * @param connectionFactory the database
     * @param writes            fenced writes on {@code stock}
     */
    public StockRepository(ConnectionFactory connectionFactory, FencedWrites writes) {
        this.db = DatabaseClient.create(Objects.requireNonNull(connectionFactory, "connectionFactory"));
        this.writes = Objects.requireNonNull(writes, "writes");
    }

    /**
     * Reads a row.
     *
     * @param sku the stock keeping unit
     * @return the row, or empty when there is none
     */
    public Mono<Stock> find(String sku) {
        return db.sql("SELECT sku, available, fence FROM stock WHERE sku = :sku")
                .bind("sku", sku)
                .map((row, md) -> new Stock(row.get("sku", String.class), row.get("available", Long.class),
                        row.get("fence", Long.class)))
                .one();
    }

    /**
     * Sets {@code available} if {@code token} is at least the row's fence (the library's one rule,
     * {@code Fencing.admits}), and stores the token as the new fence (one statement,
     * {@link FencedWrites#write(Object, String, Object, long)}), answering its two refusals as {@code false}.
     *
     * @param sku       the stock keeping unit
     * @param available the new value
     * @param token     the writer's fencing token ({@code lease.token()})
     * @return {@code true} when written, {@code false} when a newer token got there first
     *         ({@link StaleTokenException}) or there is no row ({@link MissingRowException})
     */
    public Mono<Boolean> write(String sku, long available, long token) {
        return writes.write(sku, "available", available, token)
                .thenReturn(true)
                .onErrorResume(e -> e instanceof StaleTokenException || e instanceof MissingRowException, e -> Mono.just(false));
    }

    /**
     * Creates the row or, if {@code token} is at least its fence, overwrites it: one fenced
     * {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE fence <= token} (the rule of {@code Fencing.admits}).
     *
     * @param sku       the stock keeping unit
     * @param available the value
     * @param token     the writer's fencing token
     * @return {@code true} when written, {@code false} when a newer token got there first
     */
    public Mono<Boolean> upsert(String sku, long available, long token) {
        return db.sql("INSERT INTO stock (sku, available, fence) VALUES (:sku, :available, :token)"
                        + " ON CONFLICT (sku) DO UPDATE SET available = EXCLUDED.available, fence = EXCLUDED.fence"
                        + " WHERE stock.fence IS NULL OR stock.fence <= EXCLUDED.fence")
                .bind("sku", sku)
                .bind("available", available)
                .bind("token", token)
                .fetch()
                .rowsUpdated()
                .map(n -> n > 0);
    }

    /**
     * A row of {@code stock}.
     *
     * @param sku       the stock keeping unit
     * @param available units left
     * @param fence     the token of the last accepted write, or {@code null} when never written under a lock
     */
    public record Stock(String sku, long available, Long fence) {
    }
}
