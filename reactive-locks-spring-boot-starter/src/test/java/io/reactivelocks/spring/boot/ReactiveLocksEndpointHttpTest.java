package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The {@code reactivelocks} actuator endpoint over HTTP, in a WebFlux application with Boot's actuator: what a
 * default exposure lets an HTTP client do (read: yes; force-release and revoke: no — the endpoint's default access
 * is read-only, so Boot does not map its write operations at all, and the held lock stays held), and what
 * {@code management.endpoint.reactivelocks.access=unrestricted} opens (a DELETE frees the name, a POST asks the
 * holder to let go).
 */
class ReactiveLocksEndpointHttpTest {

    private static final Duration STEP = Duration.ofSeconds(20);

    /** The application: an in-memory store session as its {@link LockStore} bean (the starter makes the client), every auto-configuration on. */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration")
    static class App {
        @Bean(destroyMethod = "")
        LockStore lockStore() {
            return LocalLocks.open();
        }
    }

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
                        "management.endpoints.web.exposure.include=reactivelocks")
                .properties(properties)
                .run();
    }

    private static HttpResponse<String> send(ConfigurableApplicationContext app, String method, String path, String json)
            throws Exception {
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(STEP);
        request = json == null ? request.method(method, HttpRequest.BodyPublishers.noBody())
                : request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static LockClient holderClient(ConfigurableApplicationContext app) {
        return app.getBean(LockStore.class).locks(LockOptions.builder().leaseTime(Duration.ofSeconds(30)).build());
    }

    @Test
    void byDefaultAnHttpClientReadsTheLocksButCannotForceReleaseOrRevoke() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            LockClient holder = holderClient(app);
            Lease lease = holder.acquire("orders:7").block(STEP);
            AtomicReference<String> asked = new AtomicReference<>();
            lease.revoked().subscribe(asked::set);

            HttpResponse<String> read = send(app, "GET", "/actuator/reactivelocks", null);
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).contains("\"name\":\"orders:7\"", "\"token\":" + lease.token());

            HttpResponse<String> release = send(app, "DELETE", "/actuator/reactivelocks/orders:7", null);
            HttpResponse<String> revoke = send(app, "POST", "/actuator/reactivelocks/orders:7", "{\"reason\":\"deploy\"}");
            assertThat(release.statusCode()).as("DELETE without write access").isEqualTo(405);
            assertThat(revoke.statusCode()).as("POST without write access").isEqualTo(405);

            assertThat(holder.inspect("orders:7").block(STEP)).isInstanceOfSatisfying(LockState.Held.class,
                    held -> assertThat(held.token()).isEqualTo(lease.token()));
            assertThat(asked.get()).as("no revocation reached the holder").isNull();
            lease.release().block(STEP);
        }
    }

    @Test
    void withUnrestrictedAccessADeleteFreesTheNameAndAPostAsksTheHolder() throws Exception {
        try (ConfigurableApplicationContext app = start("management.endpoint.reactivelocks.access=unrestricted")) {
            LockClient holder = holderClient(app);
            Lease revoked = holder.acquire("orders:8").block(STEP);
            AtomicReference<String> asked = new AtomicReference<>();
            revoked.revoked().subscribe(asked::set);
            HttpResponse<String> revoke = send(app, "POST", "/actuator/reactivelocks/orders:8", "{\"reason\":\"deploy\"}");
            assertThat(revoke.statusCode()).isEqualTo(200);
            assertThat(revoke.body()).isEqualTo("{\"name\":\"orders:8\",\"reason\":\"deploy\",\"asked\":true}");
            Awaitility.await().atMost(STEP).until(() -> "deploy".equals(asked.get()));
            revoked.release().block(STEP);

            Lease released = holder.acquire("orders:9").block(STEP);
            HttpResponse<String> release = send(app, "DELETE", "/actuator/reactivelocks/orders:9", null);
            assertThat(release.statusCode()).isEqualTo(200);
            assertThat(release.body()).startsWith("{\"name\":\"orders:9\",\"released\":[").contains("\"token\":" + released.token());
            assertThat(holder.inspect("orders:9").block(STEP)).isInstanceOf(LockState.Free.class);
        }
    }
}
