package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.r2dbc.internal.SqlTemplates;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Loads the SQL resources next to this class and fills in their {@code ${placeholders}} — only ever
 * with checked, backquoted identifiers or lists of {@code ?}; data is always bound. Whole-line
 * {@code --} comments are dropped (the driver would count a {@code ?} in them as a parameter).
 */
final class MariaDbSql {

    /** Every script, read once when this class initializes (never on an event loop later). */
    private static final SqlTemplates TEMPLATES = SqlTemplates.load(MariaDbSql.class, "schema.sql", "schema_check.sql",
            "acquire.sql",
            "renew.sql", "release.sql", "inspect.sql", "update_payload.sql", "held_by.sql", "poll.sql", "admin_names.sql",
            "semaphore_schema.sql", "semaphore_grant.sql", "semaphore_holders.sql", "grant_renew.sql", "grant_release.sql", "grant_poll.sql",
            "rwlock_schema.sql", "rwlock_grant.sql", "rwlock_held.sql", "window_schema.sql", "window_claim.sql",
            "fenced_values_schema.sql", "fenced_values_write.sql",
            "fenced_values_read.sql", "fair_schema.sql", "fair_acquire.sql", "fair_leave_purge.sql", "fair_join.sql",
            "fair_leave.sql", "fair_waiting.sql", "task_schema.sql", "task_register.sql", "task_capture.sql",
            "task_renew.sql", "task_complete.sql", "task_fail.sql",
            "task_release.sql", "task_release_owner.sql", "task_status.sql", "task_remove.sql", "task_claims.sql", "task_poll.sql",
            "admin_queues.sql", "revocations_schema.sql", "revoke.sql", "revoke_purge.sql", "revocations_poll.sql");

    private MariaDbSql() {
    }

    /**
     * @param name an identifier already checked against {@code [A-Za-z_][A-Za-z0-9_]{0,63}}
     * @return it backquoted
     */
    static String quote(String name) {
        return "`" + name + "`";
    }

    /**
     * @param database the database, or {@code null} for the connection's own
     * @param name     the object's name
     * @return the backquoted, qualified name
     */
    static String qualified(@Nullable String database, String name) {
        return database == null ? quote(name) : quote(database) + "." + quote(name);
    }

    /** @return {@code n} comma-separated {@code ?} */
    static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    /**
     * @param resource the file name next to this class
     * @param values   placeholder values (quoted identifiers, or lists of {@code ?})
     * @return the statement, without comments
     */
    static String render(String resource, Map<String, String> values) {
        return TEMPLATES.render(resource, values, false);
    }

    /**
     * @param resource a script of several statements, each ending with {@code ;} at the end of a line
     * @param values   placeholder values
     * @return its statements, without comments and without the {@code ;}
     */
    static List<String> statements(String resource, Map<String, String> values) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : render(resource, values).split("\n")) {
            current.append(line).append('\n');
            if (line.stripTrailing().endsWith(";")) {
                String s = current.toString().trim();
                out.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        if (!current.toString().isBlank()) {
            out.add(current.toString().trim());
        }
        return out;
    }
}
