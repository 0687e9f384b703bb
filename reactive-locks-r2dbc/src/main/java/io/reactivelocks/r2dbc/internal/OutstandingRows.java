package io.reactivelocks.r2dbc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rows a client's owners may have left in a table — grants lost and never released, grants
 * whose answer never came (timed out, cancelled, failed: they may still commit) — which the client
 * deletes, owner-checked, when it closes. Thread-safe. Not API: the dialect packages' code.
 */
public final class OutstandingRows {

    /**
     * A row: a name and an owner, in whatever form the table keeps them.
     *
     * @param name  the name
     * @param owner the owner
     */
    public record Row(String name, String owner) {
    }

    private final Set<Row> outstanding = ConcurrentHashMap.newKeySet();
    /** Grants with no answer yet or never: a release that found nothing does not strike them off. */
    private final Set<Row> unsettled = ConcurrentHashMap.newKeySet();

    /**
     * Notes an owner about to be granted: a row of it may exist from now on, whatever is heard back.
     *
     * @param name  the name
     * @param owner the owner
     */
    public void asking(String name, String owner) {
        Row row = new Row(name, owner);
        outstanding.add(row);
        unsettled.add(row);
    }

    /**
     * Notes the answer to {@link #asking}.
     *
     * @param name  the name
     * @param owner the owner
     * @param left  whether the owner has a row now (granted, or a waiting writer's intent)
     */
    public void answered(String name, String owner, boolean left) {
        Row row = new Row(name, owner);
        unsettled.remove(row);
        if (!left) {
            outstanding.remove(row);
        }
    }

    /**
     * Notes a release: the row is gone when the release deleted it, or when no grant of it is unsettled.
     *
     * @param name    the name
     * @param owner   the owner
     * @param deleted whether the release deleted a row
     */
    public void released(String name, String owner, boolean deleted) {
        Row row = new Row(name, owner);
        if (deleted || !unsettled.contains(row)) {
            outstanding.remove(row);
        }
    }

    /** @return the rows that may be left, forgotten from now on (on close) */
    public List<Row> drain() {
        List<Row> left = new ArrayList<>(outstanding);
        outstanding.clear();
        unsettled.clear();
        return left;
    }
}
