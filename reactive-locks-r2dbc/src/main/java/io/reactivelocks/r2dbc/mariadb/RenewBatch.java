package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The renewal of a batch of leases in one request per {@value #CHUNK} leases: an anonymous compound
 * statement ({@code BEGIN NOT ATOMIC}) that runs a table's one-lease {@code UPDATE} (owner- and
 * token-checked, not reviving an expired lease) once per lease, each on its own (autocommit, as one
 * statement each before), and answers one string of {@code 1}/{@code 0}, a character per lease: whether
 * its {@code UPDATE} changed a row. A lone lease is the plain {@code UPDATE}.
 */
final class RenewBatch {

    /** Leases per statement: 4 bound values each, a few KB of SQL. */
    static final int CHUNK = 64;

    private final String update;
    /** The statement per number of leases (2 to {@link #CHUNK}), made on first use. */
    private final Map<Integer, String> blocks = new ConcurrentHashMap<>();

    /**
     * @param update the one-lease statement, rendered: {@code ?} TTL in µs, name (stored form), owner, token
     */
    RenewBatch(String update) {
        this.update = update;
    }

    /** @return the statement that renews {@code n} leases */
    String sql(int n) {
        if (n == 1) {
            return update;
        }
        return blocks.computeIfAbsent(n, k -> {
            StringBuilder sb = new StringBuilder("BEGIN NOT ATOMIC\n    DECLARE v_renewed VARCHAR(").append(k).append(") DEFAULT '';\n");
            for (int i = 0; i < k; i++) {
                sb.append("    ").append(update.strip()).append(";\n")
                        .append("    SET v_renewed = CONCAT(v_renewed, IF(ROW_COUNT() > 0, '1', '0'));\n");
            }
            return sb.append("    SELECT v_renewed AS renewed;\nEND").toString();
        });
    }

    /** @return one outcome per request, in order; each chunk of {@value #CHUNK} is one request on {@code c} */
    Mono<List<RenewOutcome>> renew(Connection c, List<RenewRequest> batch) {
        List<List<RenewRequest>> chunks = new ArrayList<>();
        for (int i = 0; i < batch.size(); i += CHUNK) {
            chunks.add(batch.subList(i, Math.min(batch.size(), i + CHUNK)));
        }
        return Flux.fromIterable(chunks).concatMap(chunk -> renewChunk(c, chunk)).collectList().map(lists -> {
            List<RenewOutcome> all = new ArrayList<>(batch.size());
            lists.forEach(all::addAll);
            return all;
        });
    }

    private Mono<List<RenewOutcome>> renewChunk(Connection c, List<RenewRequest> chunk) {
        String sql = sql(chunk.size());
        if (chunk.size() == 1) {
            RenewRequest r = chunk.get(0);
            return Statements.update(c, sql, st -> bind(st, 0, r))
                    .map(updated -> List.of(updated > 0 ? RenewOutcome.renewed(r.leaseTime()) : RenewOutcome.notHeld()));
        }
        return Statements.first(c, sql, st -> {
            for (int i = 0; i < chunk.size(); i++) {
                bind(st, 4 * i, chunk.get(i));
            }
        }, (row, md) -> String.valueOf(row.get("renewed", String.class))).map(renewed -> {
            if (renewed.length() != chunk.size()) {
                throw new IllegalStateException("the renewal of " + chunk.size() + " leases answered " + renewed.length());
            }
            List<RenewOutcome> out = new ArrayList<>(chunk.size());
            for (int i = 0; i < chunk.size(); i++) {
                out.add(renewed.charAt(i) == '1' ? RenewOutcome.renewed(chunk.get(i).leaseTime()) : RenewOutcome.notHeld());
            }
            return out;
        });
    }

    private static void bind(io.r2dbc.spi.Statement st, int at, RenewRequest r) {
        st.bind(at, Micros.of(r.leaseTime())).bind(at + 1, StoredText.encode(r.lock().name()))
                .bind(at + 2, r.lock().owner()).bind(at + 3, r.lock().token());
    }
}
