package io.reactivelocks.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/** The statements {@link FencedWrites} writes in each {@link SqlDialect}, and how the dialect is found. */
class FencedWritesSqlTest {

    /** A factory that only names its driver: these tests read SQL text, they never connect. */
    private static ConnectionFactory named(String driver) {
        return new ConnectionFactory() {
            @Override
            public Publisher<? extends Connection> create() {
                return Mono.error(new UnsupportedOperationException("no connection in an SQL text test"));
            }

            @Override
            public ConnectionFactoryMetadata getMetadata() {
                return () -> driver;
            }
        };
    }

    @Test
    void theDialectIsTheDriversOrNamed() {
        assertThat(SqlDialect.of(named("PostgreSQL"))).isEqualTo(SqlDialect.POSTGRESQL);
        assertThat(SqlDialect.of(named("MariaDB"))).isEqualTo(SqlDialect.MARIADB);
        assertThat(SqlDialect.of(named("MySQL"))).isEqualTo(SqlDialect.MARIADB);
        assertThat(FencedWrites.of(named("MariaDB"), "t", "id").dialect()).isEqualTo(SqlDialect.MARIADB);
        assertThat(FencedWrites.of(named("H2"), SqlDialect.POSTGRESQL, "t", "id").dialect()).isEqualTo(SqlDialect.POSTGRESQL);
        assertThatThrownBy(() -> SqlDialect.of(named("H2"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("H2").hasMessageContaining("MARIADB");
        assertThatThrownBy(() -> FencedWrites.of(named("H2"), null, "t", "id")).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("dialect");
    }

    @Test
    void postgresqlWritesAndReadsTheFenceInOneStatement() {
        FencedWrites w = FencedWrites.of(named("PostgreSQL"), "Accounts", "Id").in("App").fenceColumn("Fence");
        assertThat(w.updateSql(List.of("balance", "Note"))).isEqualTo("WITH \"fenced write\" AS ("
                + "UPDATE \"App\".\"Accounts\" SET \"balance\" = $1, \"Note\" = $2, \"Fence\" = $3"
                + " WHERE \"Id\" = $4 AND (\"Fence\" IS NULL OR \"Fence\" <= $3) RETURNING 1)"
                + " SELECT (SELECT count(*) FROM \"fenced write\") AS written, count(*) AS found, max(\"Fence\") AS fence"
                + " FROM \"App\".\"Accounts\" WHERE \"Id\" = $4");
        assertThat(w.readSql()).isEqualTo("SELECT COUNT(*) AS found, MAX(\"Fence\") AS fence FROM \"App\".\"Accounts\""
                + " WHERE \"Id\" = $1");
    }

    @Test
    void mariadbQuotesWithBackticksAndBindsEachMarker() {
        FencedWrites w = FencedWrites.of(named("MariaDB"), "accounts", "id");
        assertThat(w.updateSql(List.of("balance", "note"))).isEqualTo("UPDATE `accounts` SET `balance` = ?, `note` = ?,"
                + " `fence` = ? WHERE `id` = ? AND (`fence` IS NULL OR `fence` <= ?)");
        assertThat(w.in("shop").fenceColumn("version").readSql())
                .isEqualTo("SELECT COUNT(*) AS found, MAX(`version`) AS fence FROM `shop`.`accounts` WHERE `id` = ?");
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        FencedWrites w = FencedWrites.of(named("MariaDB"), "accounts", "id");
        assertThatThrownBy(() -> w.write("k", Map.of(), 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("columns");
        assertThatThrownBy(() -> w.write("k", "fence", 1, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence");
        assertThatThrownBy(() -> w.write("k", "id", 1, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> w.write("k", "balance = 0 --", 1, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("column");
        assertThatThrownBy(() -> w.write("k", "x`; DROP TABLE t; --", 1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.write(null, "balance", 1, 1)).isInstanceOf(NullPointerException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> w.write("k", "balance", null, 1)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
        assertThatThrownBy(() -> FencedWrites.of(named("MariaDB"), "t`x", "id")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table");
        assertThatThrownBy(() -> FencedWrites.of((ConnectionFactory) null, "t", "id")).isInstanceOf(NullPointerException.class);
    }
}
