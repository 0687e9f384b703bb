package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.spring.Locked;
import io.reactivelocks.spring.LockedContext;
import io.reactivelocks.spring.ScheduledLock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.scheduling.annotation.Scheduled;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/spring.md about the annotations, in a Spring context on the in-memory stores. */
class DocsSpringTest {

    static final Duration STEP = Duration.ofSeconds(10);

    /** A fenced stock table: refuses a write whose token is lower than the last one seen for its sku. */
    public static class StockTable {
        final Map<String, Long> fences = new ConcurrentHashMap<>();
        final Map<String, Long> quantities = new ConcurrentHashMap<>();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger mostInside = new AtomicInteger();

        Mono<Boolean> write(String sku, long quantity, long token) {
            return Mono.fromSupplier(() -> {
                mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                return fences.merge(sku, token, Math::max) == token;
            }).delayElement(Duration.ofMillis(5)).doOnNext(ok -> {
                quantities.merge(sku, quantity, Long::sum);
                inside.decrementAndGet();
            });
        }
    }

    /** The application's bean with locked methods. */
    public static class Stock {
        private final StockTable stock;
        private final AtomicInteger reports;

        Stock(StockTable stock, AtomicInteger reports) {
            this.stock = stock;
            this.reports = reports;
        }

        // tag::locked[]
        @Locked("stock:#{#sku}")                                   // literal text + SpEL over the arguments
        public Mono<Boolean> reserve(String sku, long quantity) {   // runs only once the lock is held
            return LockedContext.lease()                           // the lease, from the Reactor Context
                    .flatMap(lease -> stock.write(sku, quantity, lease.token()));
        }
        // end::locked[]

        // tag::scheduled[]
        @Scheduled(fixedRate = 60_000)
        @ScheduledLock(name = "restock-report", lockAtMostFor = "5m", lockAtLeastFor = "1h")
        public Mono<Void> restockReport() {                        // at most once per hour across every instance
            return LockedContext.windowClaim()
                    .doOnNext(claim -> reports.incrementAndGet())   // claim.token() fences what the report writes
                    .then();
        }
        // end::scheduled[]
    }

    @Test
    void lockedAndScheduledLock() {
        LockClient client;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(LockingConfig.class);
            StockTable table = new StockTable();
            AtomicInteger reports = new AtomicInteger();
            ctx.registerBean(Stock.class, () -> new Stock(table, reports));
            ctx.refresh();
            Stock stock = ctx.getBean(Stock.class);
            client = ctx.getBean(LockClient.class);
            StepVerifier.create(Flux.range(0, 20).flatMap(i -> stock.reserve("apple", 1)))
                    .expectNextCount(20)
                    .expectComplete()
                    .verify(STEP);
            assertThat(table.mostInside.get()).as("never two reservations of one sku at once").isEqualTo(1);
            assertThat(table.quantities).containsEntry("apple", 20L);
            StepVerifier.create(stock.restockReport().then(stock.restockReport())).expectComplete().verify(STEP);
            assertThat(reports.get()).as("the second run of the hour is skipped").isEqualTo(1);
        }
        StepVerifier.create(client.acquire("after-close")).expectError(LockClientClosedException.class).verify(STEP);
    }
}
