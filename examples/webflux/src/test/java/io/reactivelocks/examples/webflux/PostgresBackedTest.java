package io.reactivelocks.examples.webflux;

import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.UUID;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The whole service on a random port against a real PostgreSQL (the {@link PostgresServer} fixture:
 * Debian binaries as a child process, or {@code REACTIVE_LOCKS_POSTGRES_URL}). The server is started
 * once per JVM and dies with it; every test class shares it and Spring's cached context, and uses its
 * own skus and lock names.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class PostgresBackedTest {

    static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** The one server of the test JVM (also used by the two-instance tests). */
    static final PostgresServer POSTGRES = PostgresServer.start();

    @Value("${local.server.port}")
    int port;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.r2dbc.url", () -> "r2dbc:postgresql://" + POSTGRES.host() + ":" + POSTGRES.port() + "/" + POSTGRES.database());
        registry.add("spring.r2dbc.username", POSTGRES::username);
        registry.add("spring.r2dbc.password", POSTGRES::password);
        // more connections than concurrent requests would ever need at once: lock statements, reads, writes
        registry.add("spring.r2dbc.pool.max-size", () -> "20");
        // the tests check what the locks guarantee, not how fast a loaded machine hands them over:
        // 200 requests queue on one lock, and a 10 s wait (the application's default) can run out
        registry.add("example.locks.wait-timeout", () -> "60s");
    }

    /** @return a client for one-off requests (blocking assertions: test thread only) */
    WebTestClient http() {
        return WebTestClient.bindToServer().baseUrl(baseUrl()).responseTimeout(TIMEOUT).build();
    }

    /** @return a non-blocking client, for requests issued from reactive pipelines */
    WebClient web() {
        return WebClient.create(baseUrl());
    }

    String baseUrl() {
        return "http://localhost:" + port;
    }

    static String uniqueSku(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }
}
