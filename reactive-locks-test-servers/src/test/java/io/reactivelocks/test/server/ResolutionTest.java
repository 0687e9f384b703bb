package io.reactivelocks.test.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.parallel.Isolated("sets system properties that choose how servers start")
class ResolutionTest {

    @Test
    void autoTakesTheFirstAvailableStepAndDoesNotAskLaterOnes() {
        List<Resolution.Step<String>> steps = List.of(
                Resolution.Step.unavailable(FixtureMode.EXTERNAL, "not set"),
                Resolution.Step.of(FixtureMode.BINARY, Optional::empty, () -> "binary"),
                Resolution.Step.of(FixtureMode.EMBEDDED, () -> {
                    throw new AssertionError("must not be asked");
                }, () -> "embedded"));
        assertThat(Resolution.resolve("x", FixtureMode.AUTO, "hint", steps)).isEqualTo("binary");
        assertThat(Resolution.resolve("x", FixtureMode.EMBEDDED, "hint", List.of(
                Resolution.Step.of(FixtureMode.BINARY, Optional::empty, () -> "binary"),
                Resolution.Step.of(FixtureMode.EMBEDDED, Optional::empty, () -> "embedded")))).isEqualTo("embedded");
    }

    @Test
    void nothingAvailableSaysWhatToInstall() {
        List<Resolution.Step<String>> steps = List.of(
                Resolution.Step.unavailable(FixtureMode.EXTERNAL, "X_URL is not set"),
                Resolution.Step.unavailable(FixtureMode.BINARY, "no x-server"));
        assertThatThrownBy(() -> Resolution.resolve("x", FixtureMode.AUTO, "Install it with `apt-get install x`.", steps))
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("No x server is available")
                .hasMessageContaining("apt-get install x")
                .hasMessageContaining("external: X_URL is not set")
                .hasMessageContaining("binary: no x-server");
        assertThatThrownBy(() -> Resolution.resolve("x", FixtureMode.CONTAINER, "Install x.", steps))
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("forced to mode 'container'");
    }

    @Test
    void forcedExternalWithoutTheVariableSaysWhatToInstall() {
        assertThatThrownBy(() -> RedisServer.builder().mode(FixtureMode.EXTERNAL).start())
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("apt-get install redis-server")
                .hasMessageContaining(RedisServer.URL_VARIABLE);
        assertThatThrownBy(() -> PostgresServer.builder().mode(FixtureMode.EMBEDDED).start())
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("apt-get install postgresql");
        assertThatThrownBy(() -> EtcdServer.builder().mode(FixtureMode.EMBEDDED).start())
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("apt-get install etcd-server");
    }

    @Test
    void externalServersRefuseFaultsWithAClearMessage() {
        ExternalServer s = new ExternalServer("redis", "db.example", 6379, RedisServer.URL_VARIABLE, "apt-get install redis-server");
        assertThat(s.origin()).isEqualTo(ServerOrigin.EXTERNAL);
        assertThat(s.supportsFaults()).isFalse();
        for (Runnable fault : List.<Runnable>of(s::pause, s::resume, s::kill, s::restart, s::pid)) {
            assertThatThrownBy(fault::run).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("fault tests need a child process")
                    .hasMessageContaining("Unset " + RedisServer.URL_VARIABLE);
        }
        s.close();
    }

    @Test
    void serverUrlsAreParsed() {
        assertThat(ServerUrl.parse("V", "redis://u:p%20w@h:7000", 6379)).isEqualTo(new ServerUrl("u", "p w", "h", 7000, null));
        assertThat(ServerUrl.parse("V", "redis://:pw@h", 6379)).isEqualTo(new ServerUrl(null, "pw", "h", 6379, null));
        assertThat(ServerUrl.parse("V", "r2dbc:postgresql://a:b@h:5433/db", 5432)).isEqualTo(new ServerUrl("a", "b", "h", 5433, "db"));
        assertThat(ServerUrl.parse("V", "localhost:2181", 2181)).isEqualTo(new ServerUrl(null, null, "localhost", 2181, null));
        assertThatThrownBy(() -> ServerUrl.parse("V", "::nonsense", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("V=");
    }

    @Test
    void fixtureModesAreParsedFromProperties() {
        assertThat(FixtureMode.parse("Embedded", "p")).isEqualTo(FixtureMode.EMBEDDED);
        assertThat(FixtureMode.parse("local", "p")).isEqualTo(FixtureMode.BINARY);
        assertThatThrownBy(() -> FixtureMode.parse("docker", "p")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("auto, external, binary, embedded, container");
        String key = FixtureMode.PROPERTY + ".etcd";
        System.setProperty(key, "container");
        try {
            assertThat(FixtureMode.configuredFor("etcd")).isEqualTo(FixtureMode.CONTAINER);
            System.setProperty(FixtureMode.PROPERTY, "binary");
            assertThat(FixtureMode.configuredFor("redis")).isEqualTo(FixtureMode.BINARY);
            assertThat(FixtureMode.configuredFor("etcd")).as("the per-kind property wins").isEqualTo(FixtureMode.CONTAINER);
        } finally {
            System.clearProperty(key);
            System.clearProperty(FixtureMode.PROPERTY);
        }
    }
}
