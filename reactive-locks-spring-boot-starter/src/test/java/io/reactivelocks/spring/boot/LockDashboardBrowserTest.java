package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.http.codec.autoconfigure.CodecsAutoConfiguration;
import org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The live dashboard in a real headless Chromium, served by a WebFlux application with the starter: a lock taken by
 * another client of the store appears with its token, a handoff and a release show in the page, and the force-release
 * button's request evicts the holder. Leaves a screenshot in {@code target/dashboard.png}.
 */
class LockDashboardBrowserTest {

    private static final Duration STEP = Duration.ofSeconds(20);

    /** The application: an in-memory store session as the {@link LockStore} bean (the starter builds the rest on it). */
    @SpringBootConfiguration
    @ImportAutoConfiguration({NettyReactiveWebServerAutoConfiguration.class, HttpHandlerAutoConfiguration.class,
            WebFluxAutoConfiguration.class, CodecsAutoConfiguration.class, ReactiveLocksAutoConfiguration.class,
            ReactiveLocksDashboardAutoConfiguration.class})
    static class App {
        @Bean(destroyMethod = "")
        LockStore lockStore() {
            return LocalLocks.open();
        }
    }

    @Test
    void locksTakenElsewhereAppearHandOffAndDisappearInTheBrowser() throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1", "reactive-locks.dashboard.enabled=true",
                        "reactive-locks.dashboard.write-operations=true", "spring.main.banner-mode=off")
                .run()) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            String page = "http://127.0.0.1:" + port + "/actuator/reactivelocks/dashboard";
            LockStore store = app.getBean(LockStore.class);
            LockClient elsewhere = store.locks(LockOptions.builder().leaseTime(Duration.ofSeconds(30)).build());

            try (Chromium browser = Chromium.open(page)) {
                Awaitility.await().atMost(STEP).until(() -> browser.evaluate("document.getElementById('status').textContent").endsWith("held"));
                assertThat(rows(browser)).isEqualTo("[]");

                long start = System.nanoTime();
                Lease first = elsewhere.acquire("orders:42", elsewhere.options().withPayload("node-7")).block(STEP);
                Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(50)).until(() -> rows(browser).contains("orders:42"));
                Duration appeared = Duration.ofNanos(System.nanoTime() - start);
                assertThat(browser.evaluate("document.querySelector('#locks tr').textContent"))
                        .contains("orders:42", "lock", "holder", Long.toString(first.token()), "node-7", "force release");
                Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(100))
                        .until(() -> browser.evaluate("document.querySelector('td.remaining').textContent").matches("\\d+\\.\\d s"));

                Lease permit = store.semaphores(elsewhere.options()).acquire("pool", 2).block(STEP);
                Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(50)).until(() -> rows(browser).contains("pool"));
                browser.screenshot(Path.of("target", "dashboard.png"));

                first.release().block(STEP);
                Lease second = elsewhere.acquire("orders:42").block(STEP);
                Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(50))
                        .until(() -> browser.evaluate("document.getElementById('events').textContent")
                                .contains("orders:42: token " + first.token() + " \u2192 " + second.token()));

                // the button's request (the page's confirm() cannot be clicked headless: the same POST it sends)
                HttpResponse<String> released = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                URI.create(page + "/release?name=orders%3A42")).POST(HttpRequest.BodyPublishers.noBody()).timeout(STEP).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(released.statusCode()).isEqualTo(200);
                assertThat(released.body()).isEqualTo("{\"name\":\"orders:42\",\"released\":[" + second.token() + "]}");
                start = System.nanoTime();
                Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(50)).until(() -> !rows(browser).contains("orders:42"));
                Duration disappeared = Duration.ofNanos(System.nanoTime() - start);
                assertThat(browser.evaluate("document.getElementById('events').textContent"))
                        .contains("released orders:42 (holder, token " + second.token() + ")");
                second.lost().block(STEP);
                permit.release().block(STEP);
                System.out.println("[dashboard] a lock taken elsewhere appeared after " + appeared.toMillis()
                        + " ms, a force-release disappeared after " + disappeared.toMillis() + " ms");
            }
        }
    }

    @Test
    void forceReleaseIsRefusedUnlessWriteOperationsAreOn() throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1", "reactive-locks.dashboard.enabled=true",
                        "spring.main.banner-mode=off")
                .run()) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            String page = "http://127.0.0.1:" + port + "/actuator/reactivelocks/dashboard";
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> html = http.send(HttpRequest.newBuilder(URI.create(page)).timeout(STEP).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(html.statusCode()).isEqualTo(200);
            assertThat(html.body()).contains("const RELEASE_URL = null;");
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create(page + "/release?name=x"))
                    .POST(HttpRequest.BodyPublishers.noBody()).timeout(STEP).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).contains("reactive-locks.dashboard.write-operations");
        }
    }

    private static String rows(Chromium browser) throws Exception {
        return browser.evaluate("JSON.stringify([...document.querySelectorAll('#locks tr')].map(r => r.dataset.name))");
    }
}
