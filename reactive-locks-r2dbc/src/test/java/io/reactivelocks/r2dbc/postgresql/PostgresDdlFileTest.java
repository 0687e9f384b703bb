package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/** {@code docs/ddl/postgresql.sql} is what the templates the store runs generate (no server needed). */
class PostgresDdlFileTest {

    @Test
    void theDdlFileIsWhatTheTemplatesGenerate() throws IOException {
        if (Boolean.getBoolean("reactive-locks.ddl.write")) {
            PostgresDdlFile.write();
        }
        assertThat(PostgresDdlFile.read())
                .as("%s differs from what the SQL templates generate; regenerate it with:%n  %s",
                        PostgresDdlFile.path().normalize(), PostgresDdlFile.REGENERATE)
                .isEqualTo(PostgresDdlFile.generate());
    }

    @Test
    void theDdlFileHasNoPlaceholdersAndCreatesEveryObjectTheStoreValidates() {
        String ddl = PostgresDdlFile.generate();
        assertThat(ddl).doesNotContain("${");
        assertThat(ExpectedSchema.of(ddl).objects())
                .containsExactlyElementsOf(StoreSchema.expected(PostgresLockOptions.defaults()).objects());
    }

    @Test
    void theExpectedObjectsAreReadFromTheScripts() {
        var labels = StoreSchema.expected(PostgresLockOptions.defaults()).objects().stream()
                .map(ExpectedSchema.SchemaObject::label).toList();
        assertThat(labels).startsWith("sequence public.reactive_locks_token_seq", "table public.reactive_locks",
                "column public.reactive_locks.name");
        assertThat(labels).contains("column public.reactive_locks.payload", "column public.reactive_locks.watched_until",
                "table public.reactive_lock_windows", "table public.reactive_locks_watchers",
                "function public.reactive_locks_notify", "function public.reactive_locks_watch", "function public.reactive_locks_unwatch",
                "table public.reactive_locks_waiters", "index public.reactive_locks_waiters_seq_idx",
                "function public.reactive_locks_waiters_grant", "table public.reactive_locks_permits",
                "function public.reactive_locks_permits_grant", "table public.reactive_locks_rw",
                "function public.reactive_locks_rw_grant", "table public.reactive_lock_tasks",
                "column public.reactive_lock_tasks.updated_at", "index public.reactive_lock_tasks_ready_idx",
                "table public.reactive_locks_fenced_values", "column public.reactive_locks_fenced_values.fence");
        assertThat(labels).doesNotHaveDuplicates()
                .noneMatch(l -> l.contains("CONSTRAINT") || l.contains("CHECK") || l.endsWith(".constraint"));
        var fairGrant = StoreSchema.expected(PostgresLockOptions.defaults()).objects().stream()
                .filter(o -> o.label().equals("function public.reactive_locks_waiters_grant")).findFirst().orElseThrow();
        assertThat(fairGrant.argumentNames()).startsWith("p_name,p_owner,").endsWith(",r_ahead");
    }
}
