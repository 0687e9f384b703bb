package io.reactivelocks.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.LockState;
import io.reactivelocks.admin.HeldGrant;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Store URLs, durations and output lines, in this JVM. */
class ParsingTest {

    @Test
    void storeUrlsTakeCredentialsFromTheUrlOrTheEnvironmentAndDefaultThePort() {
        StoreUrls.StoreUrl pg = StoreUrls.parse("postgresql://app:s%40cret@db:6543/locks", Map.of());
        assertThat(pg).isEqualTo(new StoreUrls.StoreUrl("postgresql", "db", 6543, "app", "s@cret", "/locks", StoreUrls.CONNECT_TIMEOUT));
        assertThat(pg.label()).isEqualTo("postgresql at db:6543");
        StoreUrls.StoreUrl redis = StoreUrls.parse("redis://cache", Map.of("REACTIVE_LOCKS_USER", "ops", "REACTIVE_LOCKS_PASSWORD", "pw"));
        assertThat(redis).isEqualTo(new StoreUrls.StoreUrl("redis", "cache", 6379, "ops", "pw", "", StoreUrls.CONNECT_TIMEOUT));
        assertThat(StoreUrls.parse("mariadb://app:pw@db/locks", Map.of()))
                .isEqualTo(new StoreUrls.StoreUrl("mariadb", "db", 3306, "app", "pw", "/locks", StoreUrls.CONNECT_TIMEOUT));
        assertThat(StoreUrls.parse("mysql://app:pw@db:3307/locks", Map.of()).label()).isEqualTo("mariadb at db:3307");
        assertThat(StoreUrls.parse("etcd://e1", Map.of()).port()).isEqualTo(2379);
        assertThat(StoreUrls.parse("zookeeper://z1:2182", Map.of()).port()).isEqualTo(2182);
        assertThat(StoreUrls.parse("memory", Map.of()).kind()).isEqualTo("memory");
    }

    @Test
    void badStoreUrlsNameTheOption() {
        for (String bad : List.of("mongodb://db:27017", "mariadb://u:p@db:3306", "redis//x", "redis://", "postgresql://u:p@db:5432", "http://[x")) {
            assertThatThrownBy(() -> StoreUrls.parse(bad, Map.of())).as(bad).isInstanceOf(CliException.class)
                    .hasMessageStartingWith("--store").satisfies(e -> assertThat(((CliException) e).exitCode()).isEqualTo(2));
        }
    }

    @Test
    void durations() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("7")).isEqualTo(Duration.ofSeconds(7));
        assertThat(Durations.parse("PT3S")).isEqualTo(Duration.ofSeconds(3));
        for (String bad : List.of("ten", "10x", "-1s", "PT", "")) {
            assertThatThrownBy(() -> Durations.parse(bad)).as(bad).isInstanceOf(CommandLine.TypeConversionException.class);
        }
        assertThat(Durations.format(Duration.ofMillis(850))).isEqualTo("850ms");
        assertThat(Durations.format(Duration.ofMillis(4240))).isEqualTo("4.2s");
        assertThat(Durations.format(Duration.ofSeconds(185))).isEqualTo("3m05s");
    }

    @Test
    void grantsAsATableAndAsJsonLines() {
        HeldGrant lock = new HeldGrant(Concept.LOCK, "orders:42", HeldGrant.Role.HOLDER, "owner-a", 17, Duration.ofMillis(8700),
                "host \"a\"", -1);
        HeldGrant permit = new HeldGrant(Concept.SEMAPHORE, "exports", HeldGrant.Role.PERMIT, "owner-b", 4, null, null, 2);
        List<String> table = Format.table(List.of(lock, permit));
        assertThat(table).hasSize(3);
        assertThat(table.get(0)).startsWith("NAME       CONCEPT    ROLE    TOKEN  REMAINING  WAITERS  OWNER    PAYLOAD");
        assertThat(table.get(1)).startsWith("orders:42  lock       holder  17     8.7s       -        owner-a  host \"a\"");
        assertThat(table.get(2)).isEqualTo("exports    semaphore  permit  4      -          2        owner-b  -");
        assertThat(Format.json(lock)).isEqualTo("{\"name\":\"orders:42\",\"concept\":\"lock\",\"role\":\"holder\",\"token\":17,"
                + "\"remainingMillis\":8700,\"waiters\":null,\"owner\":\"owner-a\",\"payload\":\"host \\\"a\\\"\"}");
        assertThat(Format.json(permit)).contains("\"remainingMillis\":null,\"waiters\":2").endsWith("\"payload\":null}");
        assertThat(Format.state(new LockState.Free("x"))).isEqualTo("x free");
        assertThat(Format.state(new LockState.Held("x", "o", 5, System.nanoTime() + 3_000_000_000L, "p")))
                .startsWith("x held token=5 remaining=").endsWith(" owner=o payload=p");
        assertThat(Format.state(new LockState.Held("x", "o", 5, Long.MAX_VALUE))).isEqualTo("x held token=5 remaining=- owner=o");
    }
}
