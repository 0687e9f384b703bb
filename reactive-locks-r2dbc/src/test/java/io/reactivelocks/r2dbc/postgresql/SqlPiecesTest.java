package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.R2dbcBadGrammarException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcPermissionDeniedException;
import io.r2dbc.spi.R2dbcTimeoutException;
import io.r2dbc.spi.R2dbcTransientResourceException;
import io.reactivelocks.LockBackendException;
import java.net.ConnectException;
import java.nio.channels.ClosedChannelException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Unit tests of the pieces under the statements: name encoding, payloads, error mapping, templates. */
class SqlPiecesTest {

    @Test
    void storedNamesAreUnchangedUnlessTheyMustBeEscapedAndNeverCollide() {
        assertThat(TextEscapes.encode("order:42 ünï 🔒 '\"%_*")).isEqualTo("order:42 ünï 🔒 '\"%_*");
        List<String> tricky = List.of("a\u0000", "a\\0", "a\\\\0", "a\\", "a\\\\", "\uD800", "\\uD800", "\uDC00\uD800",
                "\uD800\uDC00", "\\u0000", "\u0000\u0000", "\\0\\0", "a");
        Set<String> stored = new HashSet<>();
        for (String n : tricky) {
            String e = TextEscapes.encode(n);
            assertThat(e).doesNotContain("\u0000");
            assertThat(e.chars().anyMatch(c -> Character.isSurrogate((char) c) && !e.contains("\uD800\uDC00"))).isFalse();
            assertThat(TextEscapes.decode(e)).as("round trip of %s", n).isEqualTo(n);
            stored.add(e);
        }
        assertThat(stored).as("injective").hasSize(tricky.size());
    }

    @Test
    void payloadsRoundTripAnyOwnerAndNameAndIgnoreForeignOnes() {
        String owner = TextEscapes.encode("own er 3 x");
        String name = TextEscapes.encode("na me\u0000 \uD800 🔒");
        NotificationPayload p = NotificationPayload.parse("A 42 " + NotificationPayload.suffix(owner, name));
        assertThat(p.kind).isEqualTo('A');
        assertThat(p.token).isEqualTo(42);
        assertThat(p.owner).isEqualTo(owner);
        assertThat(p.name).isEqualTo(name);
        String huge = "o".repeat(9000);
        NotificationPayload noOwner = NotificationPayload.parse("R 7 " + NotificationPayload.suffix(huge, name));
        assertThat(noOwner.owner).isNull();
        assertThat(noOwner.name).isEqualTo(name);
        for (String foreign : new String[] {null, "", "hello", "A x 1 ab", "A 1 x ab", "Z 1 1 ab", "A 1 5 ab", "A 1 -1 "}) {
            assertThat(NotificationPayload.parse(foreign)).as("payload %s", foreign).isNull();
        }
    }

    @Test
    void sqlStatesDecideTransienceFirstThenExceptionTypes() {
        assertThat(transientFor(new R2dbcNonTransientResourceException("connection failure", "08006"))).isTrue();
        assertThat(transientFor(new R2dbcNonTransientResourceException("terminating connection", "57P01"))).isTrue();
        assertThat(transientFor(new R2dbcNonTransientResourceException("too many connections", "53300"))).isTrue();
        assertThat(transientFor(new R2dbcNonTransientResourceException("deadlock", "40P01"))).isTrue();
        assertThat(transientFor(new R2dbcPermissionDeniedException("password authentication failed", "28P01"))).isFalse();
        assertThat(transientFor(new R2dbcBadGrammarException("relation does not exist", "42P01"))).isFalse();
        assertThat(transientFor(new R2dbcNonTransientResourceException("database does not exist", "3D000"))).isFalse();
        assertThat(transientFor(new R2dbcNonTransientResourceException("internal", "XX000"))).isFalse();
        // no SQLSTATE: the type decides
        assertThat(transientFor(new R2dbcNonTransientResourceException("Connection closed"))).isTrue();
        assertThat(transientFor(new R2dbcNonTransientResourceException("Cannot connect", new ConnectException("refused")))).isTrue();
        assertThat(transientFor(new R2dbcTransientResourceException("pool exhausted"))).isTrue();
        assertThat(transientFor(new R2dbcTimeoutException("acquire timeout"))).isTrue();
        assertThat(transientFor(new ClosedChannelException())).isTrue();
        assertThat(transientFor(new TimeoutException())).isTrue();
        assertThat(transientFor(new IllegalStateException("bug"))).isFalse();
        assertThat(transientFor(new R2dbcBadGrammarException("bad"))).isFalse();
        LockBackendException mapped = (LockBackendException) PostgresErrors.map("n", "acquire",
                new R2dbcBadGrammarException("relation \"x\" does not exist", "42P01"));
        assertThat(mapped).hasMessageContaining("acquire").hasMessageContaining("'n'").hasMessageContaining("[42P01]");
        assertThat(mapped.lockName()).isEqualTo("n");
        LockBackendException same = new LockBackendException("n", "x", null, true);
        assertThat(PostgresErrors.map("n", "acquire", same)).isSameAs(same);
    }

    private static boolean transientFor(Throwable t) {
        return ((LockBackendException) PostgresErrors.map(null, "test", t)).isTransient();
    }

    @Test
    void statementsAreRenderedOnlyWithQuotedIdentifiers() {
        PostgresLockBackend b = PostgresLockBackend.create(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                PostgresLockOptions.builder().schema("S").table("T").sequence("Q").windowTable("W").createSchemaOnFirstUse(false).build());
        try {
            for (String sql : List.of(b.acquireSql, b.acquireRowSql, b.releaseSql, b.renewSql, b.inspectSql, b.purgeSql, b.releaseOwnersSql,
                    b.windowClaimSql, b.schemaSql, b.schemaCheckSql)) {
                assertThat(sql).doesNotContain("${");
            }
            assertThat(b.acquireSql).contains("INSERT INTO \"S\".\"T\" (name").contains("nextval('\"S\".\"Q\"')")
                    .doesNotContain("--");
            assertThat(b.schemaSql).contains("CREATE TABLE IF NOT EXISTS \"S\".\"W\"").contains("nspname = 'S'");
        } finally {
            b.close().block(PostgresTestSupport.TIMEOUT);
        }
    }
}
