package io.reactivelocks.examples.webflux;

import io.reactivelocks.examples.webflux.StockRepository.Stock;
import io.reactivelocks.spring.Locked;
import io.reactivelocks.spring.LockedContext;
import java.util.Objects;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/**
 * Stock changes declared with {@link Locked} instead of a {@code withLock} call: the same lock
 * {@code "stock:" + sku} as {@link StockController}'s reservations, so the two serialize with each other
 * across every instance.
 */
@Service
public class StockService {

    private final StockRepository stock;

    /** @param stock the stock table */
    public StockService(StockRepository stock) {
        this.stock = Objects.requireNonNull(stock, "stock");
    }

    /**
     * Adds {@code units} to the row of {@code sku}, under the lock of that sku: read, add, write fenced
     * with the lease's token (from {@link LockedContext}).
     *
     * @param sku   the stock keeping unit
     * @param units the units to add, at least 1
     * @return the row after the write; empty for an unknown sku; {@link FencedException} when the fenced
     *         write was rejected
     */
    @Locked("stock:#{#sku}")
    public Mono<Stock> restock(String sku, long units) {
        return LockedContext.lease().flatMap(lease -> stock.find(sku)
                .flatMap(row -> stock.write(sku, row.available() + units, lease.token())
                        .flatMap(written -> written
                                ? Mono.just(new Stock(sku, row.available() + units, lease.token()))
                                : Mono.error(new FencedException(sku, lease.token())))));
    }

    /** A fenced write was rejected: a newer lease wrote the row since this one was granted. */
    public static final class FencedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * @param sku   the row
         * @param token the rejected token
         */
        public FencedException(String sku, long token) {
            super("write to stock '" + sku + "' with token " + token + " was fenced off");
        }
    }
}
