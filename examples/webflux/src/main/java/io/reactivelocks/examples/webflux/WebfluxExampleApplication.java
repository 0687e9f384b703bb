package io.reactivelocks.examples.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The example service: {@code POST /stock/{sku}/reserve?qty=n},
 * {@code POST /stock/{sku}/restock?units=n}, {@code PUT /stock/{sku}?available=n},
 * {@code GET /stock/{sku}} and {@code GET /locks/{name}/events} (server-sent events). Configure the
 * database with the usual {@code spring.r2dbc.*} properties; the {@code stock} table is created at
 * startup from {@code schema.sql}. Every instance also tries the {@link StockAudit} job; it runs on one
 * instance per window.
 */
@SpringBootApplication
@EnableScheduling
public class WebfluxExampleApplication {

    /**
     * Starts the service.
     *
     * @param args Spring Boot command-line arguments, e.g. {@code --spring.r2dbc.url=r2dbc:postgresql://...}
     */
    public static void main(String[] args) {
        SpringApplication.run(WebfluxExampleApplication.class, args);
    }
}
