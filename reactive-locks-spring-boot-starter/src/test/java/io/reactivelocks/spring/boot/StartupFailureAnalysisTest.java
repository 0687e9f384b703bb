package io.reactivelocks.spring.boot;

import io.reactivelocks.test.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What a user reads when the application does not start because of a {@code reactive-locks.*} value: Spring Boot's
 * failure report (printed by {@code SpringApplication}), whose description names the property at its top — not an
 * exception five bean creations deep.
 */
class StartupFailureAnalysisTest {

    @BeforeAll
    static void noLoggingSystem() {
        // the test JVM's slf4j-simple prints the report; Boot should not reconfigure logging
        System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE);
    }

    @AfterAll
    static void clear() {
        System.clearProperty(LoggingSystem.SYSTEM_PROPERTY);
    }

    /** @return the description of the failure report, from its first line to the action */
    private static String failureDescription(Class<?> application, String... properties) {
        String report = failureReport(application, properties);
        return report.substring(report.indexOf("Description:") + "Description:".length(), report.indexOf("Action:")).strip();
    }

    /** @return the failure report, from its title to its end */
    private static String failureReport(Class<?> application, String... properties) {
        String all;
        try (LogCapture output = new LogCapture()) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
                    .properties(properties).run().close()).isNotNull();
            all = String.join("\n", output.lines());
        }
        assertThat(all).contains("APPLICATION FAILED TO START");
        return all.substring(all.lastIndexOf("APPLICATION FAILED TO START"));
    }

    @Test
    void aRenewalIntervalNotShorterThanTheLeaseTimeIsReportedAsThatPropertyNamingTheOther() {
        String description = failureDescription(OnRedis.class,
                "reactive-locks.lease-time=5s", "reactive-locks.renewal-interval=5s");
        assertThat(description).startsWith("Binding to target io.reactivelocks.spring.boot.ReactiveLocksProperties failed")
                .contains("Property: reactive-locks.renewalInterval")
                .contains("Origin: \"reactive-locks.renewal-interval\" from property source")
                .contains("Reason: reactive-locks.renewal-interval (5 s) must be shorter than reactive-locks.lease-time (5 s)");
    }

    @Test
    void aStoreOptionTheStoreRefusesIsReportedAsThatProperty() {
        String description = failureDescription(OnRedis.class, "reactive-locks.redis.key-prefix=app{1}:");
        assertThat(description.lines().findFirst()).hasValueSatisfying(first -> assertThat(first)
                .contains("Invalid value 'app{1}:' for configuration property 'reactive-locks.redis.key-prefix'"));
    }

    @Test
    void aZeroWaitTimeoutIsReportedAsThatProperty() {
        String description = failureDescription(OnRedis.class, "reactive-locks.wait-timeout=0");
        assertThat(description).contains("Property: reactive-locks.wait-timeout")
                .contains("reactive-locks.wait-timeout must be positive, or -1 to wait until cancelled");
    }

    @Test
    void aMissingPostgresSchemaInValidateModeFailsTheStartListingTheMissingObjectsFirstAndNamingTheProperty() {
        try (PostgresServer server = PostgresServer.start()) {
            postgres = server;
            String report = failureReport(OnPostgres.class, "reactive-locks.postgres.schema-mode=validate",
                    "reactive-locks.postgres.schema=never_created");
            String description = report.substring(report.indexOf("Description:") + "Description:".length(),
                    report.indexOf("Action:")).strip();
            assertThat(description).startsWith("The PostgreSQL schema of reactive-locks misses ")
                    .contains("\n    - sequence never_created.reactive_locks_token_seq\n    - table never_created.reactive_locks\n")
                    .contains("    - function never_created.reactive_locks_permits_grant\n")
                    .contains("    - table never_created.reactive_lock_tasks\n")
                    .contains("reactive-locks.postgres.schema-mode is validate");
            assertThat(report.substring(report.indexOf("Action:"))).contains("docs/ddl/postgresql.sql",
                    "reactive-locks.postgres.schema-mode=create");
        } finally {
            postgres = null;
        }
    }

    @Test
    void privilegesTheRoleLacksAreReportedAsPrivilegesWithTheGrantsToRun() {
        IncompleteSchemaException cause = new IncompleteSchemaException(
                List.of("privilege DELETE, INSERT, UPDATE on table public.reactive_locks"), new IllegalStateException("lacking"));
        FailureAnalysis analysis = new IncompleteSchemaFailureAnalyzer().analyze(new IllegalStateException(cause), cause);
        assertThat(analysis.getDescription()).startsWith("The PostgreSQL schema of reactive-locks misses 1 privilege of the"
                + " application's database role:\n    - privilege DELETE, INSERT, UPDATE on table public.reactive_locks\n");
        assertThat(analysis.getAction()).contains("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app");
    }

    @Test
    void anUnknownSchemaModeIsReportedAsThatProperty() {
        String description = failureDescription(OnRedis.class, "reactive-locks.postgres.schema-mode=maybe");
        assertThat(description).contains("reactive-locks.postgres.schema-mode").contains("maybe");
    }

    /** The server of the test that starts {@link OnPostgres}. */
    private static PostgresServer postgres;

    /** An application with an R2DBC connection factory on {@link #postgres} and the starter. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ReactiveLocksAutoConfiguration.class, ReactiveLocksAnnotationsAutoConfiguration.class})
    static class OnPostgres {

        @Bean
        ConnectionFactory connectionFactory() {
            return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                    .host(postgres.host()).port(postgres.port())
                    .username(postgres.username()).password(postgres.password()).database(postgres.database())
                    .connectTimeout(Duration.ofSeconds(3))
                    .build());
        }
    }

    /** An application with a Redis client (that connects on first use only) and the starter. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ReactiveLocksAutoConfiguration.class, ReactiveLocksAnnotationsAutoConfiguration.class})
    static class OnRedis {

        @Bean(destroyMethod = "shutdown")
        RedisClient redisClient() {
            return RedisClient.create("redis://127.0.0.1:1");
        }
    }
}
