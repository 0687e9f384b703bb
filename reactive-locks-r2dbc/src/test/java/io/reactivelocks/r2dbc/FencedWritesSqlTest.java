package io.reactivelocks.r2dbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

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
        RecordingConnections db = new RecordingConnections("PostgreSQL");
        FencedWrites w = FencedWrites.of(db, "Accounts", "Id").in("App").fenceColumn("Fence");
        StepVerifier.create(w.write("k", orderedColumns("balance", 1, "Note", "n"), 7))
                .expectErrorMessage(RecordingConnections.NO_SERVER)
                .verify(Duration.ofSeconds(5));
        assertThat(db.statements).containsExactly("WITH \"fenced write\" AS ("
                + "UPDATE \"App\".\"Accounts\" SET \"balance\" = $1, \"Note\" = $2, \"Fence\" = $3"
                + " WHERE \"Id\" = $4 AND (\"Fence\" IS NULL OR \"Fence\" <= $3) RETURNING 1)"
                + " SELECT (SELECT count(*) FROM \"fenced write\") AS written, count(*) AS found, max(\"Fence\") AS fence"
                + " FROM \"App\".\"Accounts\" WHERE \"Id\" = $4");
    }

    @Test
    void mariadbQuotesWithBackticksAndBindsEachMarker() {
        RecordingConnections db = new RecordingConnections("MariaDB");
        StepVerifier.create(FencedWrites.of(db, "accounts", "id").write("k", orderedColumns("balance", 1, "note", "n"), 7))
                .expectErrorMessage(RecordingConnections.NO_SERVER)
                .verify(Duration.ofSeconds(5));
        assertThat(db.statements).containsExactly("UPDATE `accounts` SET `balance` = ?, `note` = ?,"
                + " `fence` = ? WHERE `id` = ? AND (`fence` IS NULL OR `fence` <= ?)");

        // an update that changed no row is followed by the read of the row's fence
        RecordingConnections unchanged = new RecordingConnections("MariaDB", 0L);
        StepVerifier.create(FencedWrites.of(unchanged, "accounts", "id").in("shop").fenceColumn("version").write("k", "balance", 1, 7))
                .expectErrorMessage(RecordingConnections.NO_SERVER)
                .verify(Duration.ofSeconds(5));
        assertThat(unchanged.statements).containsExactly(
                "UPDATE `shop`.`accounts` SET `balance` = ?, `version` = ? WHERE `id` = ? AND (`version` IS NULL OR `version` <= ?)",
                "SELECT COUNT(*) AS found, MAX(`version`) AS fence FROM `shop`.`accounts` WHERE `id` = ?");
    }

    private static Map<String, Object> orderedColumns(String c1, Object v1, String c2, Object v2) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(c1, v1);
        m.put(c2, v2);
        return m;
    }

    /**
     * A test double of a connection factory that records the SQL text of each statement created on
     * its connections. The first statement executed answers with {@code updated} rows changed when
     * given (a MariaDB update), every other one fails with {@link #NO_SERVER}: these tests read the
     * statements {@link FencedWrites} sends, they need no server.
     */
    private static final class RecordingConnections implements ConnectionFactory {
        static final String NO_SERVER = "no server in an SQL text test";

        final List<String> statements = new CopyOnWriteArrayList<>();
        private final String driver;
        private final Long updated;

        RecordingConnections(String driver) {
            this(driver, null);
        }

        RecordingConnections(String driver, Long updated) {
            this.driver = driver;
            this.updated = updated;
        }

        @Override
        public Publisher<? extends Connection> create() {
            return Mono.just(proxy(Connection.class, (method, args) -> switch (method) {
                case "createStatement" -> statement((String) args[0]);
                case "close" -> Mono.empty();
                default -> throw new UnsupportedOperationException(method);
            }));
        }

        private Statement statement(String sql) {
            statements.add(sql);
            boolean answer = updated != null && statements.size() == 1;
            return proxy(Statement.class, (method, args) -> switch (method) {
                case "bind", "bindNull", "add" -> null; // replaced by the proxy itself below
                case "execute" -> answer ? Mono.just(proxy(Result.class, (m, a) -> switch (m) {
                    case "getRowsUpdated" -> Mono.just(updated);
                    default -> throw new UnsupportedOperationException(m);
                })) : Mono.error(new IllegalStateException(NO_SERVER));
                default -> throw new UnsupportedOperationException(method);
            });
        }

        @Override
        public ConnectionFactoryMetadata getMetadata() {
            return () -> driver;
        }

        /** What a proxied method answers, by name and arguments. */
        private interface Answer {
            Object answer(String method, Object[] args);
        }

        /** @return a proxy of {@code type} answering with {@code answer}; a method answering null returns the proxy itself */
        private static <T> T proxy(Class<T> type, Answer answer) {
            return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return switch (method.getName()) {
                        case "hashCode" -> System.identityHashCode(self);
                        case "equals" -> self == args[0];
                        default -> type.getSimpleName() + " double";
                    };
                }
                Object a = answer.answer(method.getName(), args);
                return a == null ? self : a;
            }));
        }
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
