package io.reactivelocks.spring.boot;

import io.reactivelocks.test.LogCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
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
        String all;
        try (LogCapture output = new LogCapture()) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
                    .properties(properties).run().close()).isNotNull();
            all = String.join("\n", output.lines());
        }
        assertThat(all).contains("APPLICATION FAILED TO START");
        String report = all.substring(all.lastIndexOf("APPLICATION FAILED TO START"));
        return report.substring(report.indexOf("Description:") + "Description:".length(), report.indexOf("Action:")).strip();
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
