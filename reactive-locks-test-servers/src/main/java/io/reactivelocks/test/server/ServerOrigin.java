package io.reactivelocks.test.server;

/** Where a {@link ServerHandle} comes from in the fixture resolution chain. */
public enum ServerOrigin {
    /** A running server named by an environment variable; no fault methods. */
    EXTERNAL,
    /** A child process of this JVM running the locally installed binary; every fault method works. */
    LOCAL_BINARY,
    /** A server from a Maven artifact (in this JVM or started by a library); some fault methods work. */
    EMBEDDED,
    /** A container started through Testcontainers; fault methods map to the Docker API's pause, unpause and kill. */
    CONTAINER
}
