package io.reactivelocks.examples.webflux;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.examples.webflux.StockRepository.Stock;
import java.util.Map;
import java.util.Objects;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Stock endpoints. Every mutation of a row runs under the lock {@code "stock:" + sku}
 * ({@link LockClient#withLock}): read, decide, then write with the lease's fencing token. The lock
 * serializes the read-modify-write across every instance of the service (no oversell, no lost
 * update); the fence makes the database itself reject a write whose lease was lost meanwhile.
 * A request that cannot get the lock within the wait timeout, or loses it, gets 503.
 */
@RestController
public class StockController {

    private final LockClient locks;
    private final StockRepository stock;
    private final StockService service;

    /**
     * @param locks   the application's lock client
     * @param stock   the stock table
     * @param service the annotated stock changes
     */
    public StockController(LockClient locks, StockRepository stock, StockService service) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.stock = Objects.requireNonNull(stock, "stock");
        this.service = Objects.requireNonNull(service, "service");
    }

    /**
     * Adds {@code units} to the stock of {@code sku} ({@link StockService#restock}, a {@code @Locked}
     * method): 200 with the row, 404 for an unknown sku, 409 when the fenced write was rejected, 400 for
     * {@code units < 1}.
     *
     * @param sku   the stock keeping unit
     * @param units the units to add, at least 1
     * @return the row after the write
     */
    @PostMapping("/stock/{sku}/restock")
    public Mono<ResponseEntity<Stock>> restock(@PathVariable("sku") String sku, @RequestParam("units") long units) {
        if (units < 1) {
            return Mono.just(ResponseEntity.badRequest().build());
        }
        return service.restock(sku, units)
                .map(ResponseEntity::ok)
                .onErrorResume(StockService.FencedException.class, e -> Mono.just(ResponseEntity.status(HttpStatus.CONFLICT).build()))
                .defaultIfEmpty(ResponseEntity.notFound().build());
    }

    /**
     * Reserves {@code qty} units: 200 with the units left, 409 when there are fewer than {@code qty}
     * (or the fenced write was rejected), 404 for an unknown sku, 400 for {@code qty < 1}.
     *
     * @param sku the stock keeping unit
     * @param qty the quantity, at least 1
     * @return the reservation
     */
    @PostMapping("/stock/{sku}/reserve")
    public Mono<ResponseEntity<Reservation>> reserve(@PathVariable("sku") String sku, @RequestParam(name = "qty", defaultValue = "1") long qty) {
        if (qty < 1) {
            return Mono.just(ResponseEntity.badRequest().build());
        }
        return locks.withLock(lockName(sku), lease -> stock.find(sku)
                .flatMap(row -> {
                    if (row.available() < qty) {
                        return Mono.just(ResponseEntity.status(HttpStatus.CONFLICT).body(
                                new Reservation(sku, Reservation.INSUFFICIENT, qty, row.available(), lease.token())));
                    }
                    long left = row.available() - qty;
                    return stock.write(sku, left, lease.token()).map(written -> written
                            ? ResponseEntity.ok(new Reservation(sku, Reservation.RESERVED, qty, left, lease.token()))
                            : ResponseEntity.status(HttpStatus.CONFLICT).body(
                                    new Reservation(sku, Reservation.FENCED, qty, row.available(), lease.token())));
                })
                .defaultIfEmpty(ResponseEntity.notFound().build()));
    }

    /**
     * Sets the stock of {@code sku} (creating the row), under the lock and fenced like a reservation.
     *
     * @param sku       the stock keeping unit
     * @param available the units available, at least 0
     * @return 200 with the row, 409 when the fenced write was rejected, 400 for a negative value
     */
    @PutMapping("/stock/{sku}")
    public Mono<ResponseEntity<Stock>> put(@PathVariable("sku") String sku, @RequestParam("available") long available) {
        if (available < 0) {
            return Mono.just(ResponseEntity.badRequest().build());
        }
        return locks.withLock(lockName(sku), lease -> stock.upsert(sku, available, lease.token())
                .map(written -> written
                        ? ResponseEntity.ok(new Stock(sku, available, lease.token()))
                        : ResponseEntity.status(HttpStatus.CONFLICT).<Stock>build()));
    }

    /**
     * Reads the stock of {@code sku} (no lock: a read of one row is consistent on its own).
     *
     * @param sku the stock keeping unit
     * @return 200 with the row, or 404
     */
    @GetMapping("/stock/{sku}")
    public Mono<ResponseEntity<Stock>> get(@PathVariable("sku") String sku) {
        return stock.find(sku).map(ResponseEntity::ok).defaultIfEmpty(ResponseEntity.notFound().build());
    }

    /**
     * @param sku the stock keeping unit
     * @return the name of the lock guarding its row
     */
    public static String lockName(String sku) {
        return "stock:" + sku;
    }

    /**
     * The lock was not granted within the wait timeout, or was lost while the request ran.
     *
     * @param e the failure
     * @return 503 with the reason
     */
    @ExceptionHandler({LockTimeoutException.class, LockLostException.class})
    public ResponseEntity<Map<String, String>> lockUnavailable(RuntimeException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", String.valueOf(e.getMessage())));
    }

    /**
     * A lock name the client refuses (over 1024 UTF-8 bytes).
     *
     * @param e the failure
     * @return 400 with the reason
     */
    @ExceptionHandler(IllegalArgumentException.class)
    public ResponseEntity<Map<String, String>> badArgument(IllegalArgumentException e) {
        return ResponseEntity.badRequest().body(Map.of("error", String.valueOf(e.getMessage())));
    }
}
