package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Row;
import io.r2dbc.spi.Statement;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A renewal batch as the four arrays that {@code renew.sql} and {@code semaphore_renew.sql} join with
 * {@code unnest} (names and owners in stored form, tokens, TTLs in µs), and the outcomes read back from
 * the rows the statement renewed ({@code RETURNING name, owner, token}).
 */
record RenewArrays(List<RenewRequest> batch, String[] names, String[] owners, Long[] tokens, Long[] ttls) {

    static RenewArrays of(List<RenewRequest> batch) {
        int n = batch.size();
        String[] names = new String[n];
        String[] owners = new String[n];
        Long[] tokens = new Long[n];
        Long[] ttls = new Long[n];
        for (int i = 0; i < n; i++) {
            RenewRequest r = batch.get(i);
            names[i] = TextEscapes.encode(r.lock().name());
            owners[i] = TextEscapes.encode(r.lock().owner());
            tokens[i] = r.lock().token();
            ttls[i] = Micros.of(r.leaseTime());
        }
        return new RenewArrays(batch, names, owners, tokens, ttls);
    }

    /** Binds the arrays as $1 to $4. */
    void bind(Statement st) {
        st.bind(0, names).bind(1, owners).bind(2, tokens).bind(3, ttls);
    }

    /** @return a renewed row, as {@link #outcomes} looks it up */
    static Renewed renewed(Row row) {
        return new Renewed(row.get("name", String.class), row.get("owner", String.class), row.get("token", Long.class));
    }

    /** @return one outcome per request, in order: renewed when its row came back */
    List<RenewOutcome> outcomes(Set<Renewed> renewed) {
        List<RenewOutcome> out = new ArrayList<>(names.length);
        for (int i = 0; i < names.length; i++) {
            boolean ok = renewed.contains(new Renewed(names[i], owners[i], tokens[i]));
            out.add(ok ? RenewOutcome.renewed(batch.get(i).leaseTime()) : RenewOutcome.notHeld());
        }
        return out;
    }

    /** A renewed row, in stored form. */
    record Renewed(String name, String owner, Long token) {
    }
}
