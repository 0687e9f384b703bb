package io.reactivelocks.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.examples.webflux.StockRepository.Stock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;

/**
 * Two instances of the service (two application contexts, no web server) on the one PostgreSQL of the
 * test JVM: the {@code @Locked} restock and the {@code @ScheduledLock} audit across both.
 */
class TwoInstancesTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** This class's own audit job name, so the other test classes' instances never run it. */
    private static final String AUDIT = "audit-" + UUID.randomUUID();

    private static ConfigurableApplicationContext a;
    private static ConfigurableApplicationContext b;

    @BeforeAll
    static void start() {
        a = instance("a");
        b = instance("b");
    }

    @AfterAll
    static void stop() {
        for (ConfigurableApplicationContext c : new ConfigurableApplicationContext[] {a, b}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static ConfigurableApplicationContext instance(String name) {
        var pg = PostgresBackedTest.POSTGRES;
        // command-line arguments: they win over application.properties (builder properties would not)
        return new SpringApplicationBuilder(WebfluxExampleApplication.class)
                .web(WebApplicationType.NONE)
                .run("--spring.r2dbc.url=r2dbc:postgresql://" + pg.host() + ":" + pg.port() + "/" + pg.database(),
                        "--spring.r2dbc.username=" + pg.username(),
                        "--spring.r2dbc.password=" + pg.password(),
                        "--example.locks.wait-timeout=60s",
                        "--example.instance=" + name,
                        "--example.audit.name=" + AUDIT,
                        "--example.audit.rate-ms=100",
                        "--example.audit.window=1s");
    }

    @Test
    void restocksFromBothInstancesNeverLoseAnUpdate() {
        String sku = PostgresBackedTest.uniqueSku("melon");
        a.getBean(StockRepository.class).upsert(sku, 0, 0).block(TIMEOUT);
        StockService serviceA = a.getBean(StockService.class);
        StockService serviceB = b.getBean(StockService.class);

        List<Stock> writes = Flux.range(0, 10)
                .flatMap(i -> Flux.merge(serviceA.restock(sku, 1), serviceB.restock(sku, 1)))
                .collectList()
                .block(TIMEOUT);

        // 20 read-add-writes of one unit under the same lock from two instances: each saw a different level
        assertThat(writes).extracting(Stock::available).containsExactlyInAnyOrderElementsOf(
                java.util.stream.LongStream.rangeClosed(1, 20).boxed().toList());
        List<Stock> inOrder = writes.stream().sorted((x, y) -> Long.compare(x.available(), y.available())).toList();
        assertThat(inOrder).extracting(Stock::fence).as("tokens grow with each write").isSorted().doesNotHaveDuplicates();
        assertThat(a.getBean(StockRepository.class).find(sku).block(TIMEOUT)).isEqualTo(inOrder.get(19));
    }

    @Test
    void theAuditRunsOncePerWindowAcrossBothInstances() {
        DatabaseClient db = DatabaseClient.create(a.getBean(ConnectionFactory.class));
        await().atMost(TIMEOUT).until(() -> runs(db).size() >= 3);
        List<long[]> runs = runs(db);
        assertThat(runs).extracting(r -> r[0]).as("one run per window").doesNotHaveDuplicates().isSorted();
        assertThat(runs).extracting(r -> r[1]).as("each run under a newer lease").doesNotHaveDuplicates().isSorted();
    }

    /** @return the audit runs of this class's job, in insertion order: {window, token} */
    private static List<long[]> runs(DatabaseClient db) {
        return db.sql("SELECT window_index, token FROM stock_audit WHERE job = :job ORDER BY id")
                .bind("job", AUDIT)
                .map((row, md) -> new long[] {row.get("window_index", Long.class), row.get("token", Long.class)})
                .all()
                .collectList()
                .block(TIMEOUT);
    }
}
