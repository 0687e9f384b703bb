package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.reactivelocks.r2dbc.SchemaMode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Options and entry arguments are checked at call time, naming the argument; names written into SQL are identifiers only. */
class MariaDbLockOptionsTest {

    @Test
    void identifierInjectionIsRejectedForEveryNameWrittenIntoSql() {
        for (String bad : new String[] {"x`; drop table reactive_locks; --", "a b", "1abc", "", "naïve", "a-b", "x".repeat(65),
            "test.reactive_locks", "`quoted`", "semi;colon", "nul\u0000"}) {
            assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().table(bad)).withMessageContaining("table");
            assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().sequence(bad)).withMessageContaining("sequence");
            assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().database(bad)).withMessageContaining("database");
        }
        assertThatNullPointerException().isThrownBy(() -> MariaDbLockOptions.builder().table(null)).withMessageContaining("table");
        assertThat(MariaDbLockOptions.builder().table("Order_1").database("x".repeat(64)).build().table()).isEqualTo("Order_1");
    }

    @Test
    void durationsAndSizesMustBePositive() {
        assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().pollInterval(Duration.ZERO))
                .withMessageContaining("pollInterval");
        assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().connectTimeout(Duration.ofSeconds(-1)))
                .withMessageContaining("connectTimeout");
        assertThatIllegalArgumentException().isThrownBy(() -> MariaDbLockOptions.builder().poolMaxSize(0)).withMessageContaining("poolMaxSize");
        assertThatNullPointerException().isThrownBy(() -> MariaDbLockOptions.builder().schemaMode(null)).withMessageContaining("schemaMode");
        assertThatNullPointerException().isThrownBy(() -> MariaDbLocks.connect((io.r2dbc.spi.ConnectionFactory) null)).withMessageContaining("factory");
        assertThatNullPointerException().isThrownBy(() -> MariaDbLocks.connect((MariaDbLockBackend) null)).withMessageContaining("backend");
    }

    @Test
    void mutateKeepsEverythingAndDefaultsAreDocumented() {
        MariaDbLockOptions o = MariaDbLockOptions.builder().database("locks").table("t").sequence("s")
                .schemaMode(SchemaMode.NONE).poolMaxSize(3).pollInterval(Duration.ofMillis(70)).build();
        MariaDbLockOptions copy = o.mutate().build();
        assertThat(copy.toString()).isEqualTo(o.toString());
        MariaDbLockOptions d = MariaDbLockOptions.defaults();
        assertThat(d.database()).isNull();
        assertThat(d.table()).isEqualTo("reactive_locks");
        assertThat(d.sequence()).isEqualTo("reactive_locks_token_seq");
        assertThat(d.schemaMode()).isEqualTo(SchemaMode.CREATE);
        assertThat(d.poolMaxSize()).isEqualTo(10);
        assertThat(d.pollInterval()).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void storedNamesAreInjectiveAndReadable() {
        for (String name : new String[] {"plain", "a\\b", "\\uD800", "\uD800", "\uDC00x", "\uD83D\uDE00", "nul\u0000", "a\\\\b"}) {
            assertThat(StoredText.decode(StoredText.encode(name))).isEqualTo(name);
        }
        assertThat(StoredText.encode("order:42")).isEqualTo("order:42");
        assertThat(StoredText.encode("\uD800")).isNotEqualTo(StoredText.encode("\\uD800"));
    }
}
