package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.SqlTemplates;
import java.util.Map;

/**
 * Loads the SQL resources next to this class and fills in their {@code ${placeholders}} — only
 * ever with checked, quoted identifiers (see {@link SqlIdentifiers}); data is always bound.
 * Statements are rendered once, when a backend is created, never per call.
 */
final class SqlScripts {

    /** Every script, read once when this class initializes (never on an event loop later). */
    private static final SqlTemplates TEMPLATES = SqlTemplates.load(SqlScripts.class, "schema.sql", "schema_check.sql", "acquire.sql",
            "acquire_row.sql", "release.sql", "renew.sql", "inspect.sql", "update_payload.sql", "purge.sql", "release_owners.sql", "window_claim.sql",
            "task_schema.sql", "task_schema_check.sql", "task_register.sql", "task_capture.sql", "task_renew.sql",
            "task_complete.sql", "task_fail.sql", "task_release.sql", "task_status.sql", "task_remove.sql",
            "fenced_values_schema.sql", "fenced_values_check.sql", "fenced_values_write.sql", "fenced_values_read.sql",
            "semaphore_schema.sql", "semaphore_check.sql", "semaphore_grant.sql", "semaphore_renew.sql",
            "semaphore_release.sql", "semaphore_holders.sql", "rwlock_schema.sql", "rwlock_grant.sql", "rwlock_holders.sql",
            "fair_schema.sql", "fair_grant.sql", "fair_release.sql", "fair_check.sql", "fair_waiting.sql", "admin_names.sql",
            "admin_queues.sql", "task_claims.sql",
            "watchers_schema.sql", "watch.sql", "unwatch.sql", "unwatch_all.sql", "schema_validate.sql", "schema_privileges.sql");

    private SqlScripts() {
    }

    /**
     * @param resource   the file name next to this class, e.g. {@code acquire.sql}
     * @param values     placeholder values (already quoted identifiers)
     * @param keepComments {@code false} to drop whole-line {@code --} comments (statements), {@code true} to send as is
     * @return the SQL text
     * @throws IllegalStateException when the resource is missing or a placeholder has no value
     */
    static String render(String resource, Map<String, String> values, boolean keepComments) {
        return TEMPLATES.render(resource, values, keepComments);
    }
}
