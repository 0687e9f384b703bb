package io.reactivelocks.examples.webflux;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spring.LockedContext;
import io.reactivelocks.spring.ScheduledLock;
import java.util.Objects;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * A reactive scheduled job that runs once per window across every instance: each instance tries it every
 * {@code example.audit.rate-ms}; {@link ScheduledLock} lets one instance at a time in, and only the first
 * run of each {@code example.audit.window}. A run records what it saw in {@code stock_audit}, with its
 * window and its lease's fencing token.
 */
@Component
public class StockAudit {

    private final DatabaseClient db;
    private final String instance;

    /**
     * @param connectionFactory the database
     * @param instance          this instance's name ({@code example.instance}, default a random id)
     */
    public StockAudit(ConnectionFactory connectionFactory, @Value("${example.instance:${random.uuid}}") String instance) {
        this.db = DatabaseClient.create(Objects.requireNonNull(connectionFactory, "connectionFactory"));
        this.instance = instance;
    }

    /**
     * One run: counts the rows and units of {@code stock} and appends them to {@code stock_audit}.
     *
     * @return completes when the row is written
     */
    @Scheduled(fixedRateString = "${example.audit.rate-ms}")
    @ScheduledLock(name = "${example.audit.name}", lockAtMostFor = "30s", lockAtLeastFor = "${example.audit.window}")
    public Mono<Void> audit() {
        return Mono.zip(LockedContext.lease(), LockedContext.windowClaim()).flatMap(t -> db.sql(
                        "INSERT INTO stock_audit (job, window_index, token, instance, skus, units)"
                                + " SELECT :job, :window, :token, :instance, count(*), coalesce(sum(available), 0) FROM stock")
                .bind("job", t.getT1().name())
                .bind("window", t.getT2().window())
                .bind("token", t.getT1().token())
                .bind("instance", instance)
                .fetch()
                .rowsUpdated())
                .then();
    }
}
