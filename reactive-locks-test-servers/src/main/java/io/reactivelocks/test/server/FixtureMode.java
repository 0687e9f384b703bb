package io.reactivelocks.test.server;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How a fixture finds its server. {@link #AUTO} walks the chain: an environment variable naming a
 * running server ({@link #EXTERNAL}), the local binary ({@link #BINARY}), an embedded server from
 * Maven ({@link #EMBEDDED}), a Docker container ({@link #CONTAINER}), else it fails saying what to
 * install. Any other value forces that one step and fails when it is not available.
 *
 * <p>Chosen by, first match wins: the fixture builder's {@code mode(..)}, the system property
 * {@code reactive-locks.fixture.mode.<kind>} (kind = {@code redis}, {@code postgres}, {@code mariadb}, {@code etcd},
 * {@code zookeeper}), the system property {@value #PROPERTY}, the environment variable
 * {@value #ENVIRONMENT_VARIABLE}, else {@link #AUTO}.
 */
public enum FixtureMode {
    /** Walk the whole chain and take the first available step. */
    AUTO,
    /** Only a running server named by the kind's environment variable. */
    EXTERNAL,
    /** Only the locally installed binary, as a child process. */
    BINARY,
    /** Only an embedded server from a Maven artifact on the class path. */
    EMBEDDED,
    /** Only a container, through Testcontainers (needs it on the class path and a Docker API, e.g. podman's). */
    CONTAINER;

    /** The system property that picks the mode for every kind. */
    public static final String PROPERTY = "reactive-locks.fixture.mode";

    /** The environment variable that picks the mode for every kind when no property is set. */
    public static final String ENVIRONMENT_VARIABLE = "REACTIVE_LOCKS_FIXTURE_MODE";

    /**
     * Reads the configured mode for one kind of server.
     *
     * @param kind the server kind, for example {@code redis}
     * @return the mode from the kind's property, the global property, the environment, or {@link #AUTO}
     * @throws IllegalArgumentException when a configured value is not a mode
     */
    public static FixtureMode configuredFor(String kind) {
        String value = System.getProperty(PROPERTY + "." + kind);
        String source = PROPERTY + "." + kind;
        if (isBlank(value)) {
            value = System.getProperty(PROPERTY);
            source = PROPERTY;
        }
        if (isBlank(value)) {
            value = System.getenv(ENVIRONMENT_VARIABLE);
            source = ENVIRONMENT_VARIABLE;
        }
        return isBlank(value) ? AUTO : parse(value, source);
    }

    /**
     * Parses a mode name, case-insensitively; {@code local} is accepted for {@link #BINARY}.
     *
     * @param value  the text to parse
     * @param source where the text came from, for the error message
     * @return the mode
     * @throws IllegalArgumentException when the text is not a mode
     */
    public static FixtureMode parse(String value, String source) {
        String v = value.trim().toUpperCase(Locale.ROOT);
        if (v.equals("LOCAL")) {
            return BINARY;
        }
        try {
            return valueOf(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + "='" + value + "' is not a fixture mode; use one of "
                    + Arrays.stream(values()).map(m -> m.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")), e);
        }
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
