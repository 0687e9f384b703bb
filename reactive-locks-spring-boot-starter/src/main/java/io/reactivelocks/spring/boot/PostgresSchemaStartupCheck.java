package io.reactivelocks.spring.boot;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresSchemaException;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * The startup check of {@code reactive-locks.postgres.schema-mode=validate}: once, while the context starts, asks the
 * database whether every object of the store exists ({@link PostgresLockBackend#validateSchema()}) over a backend of
 * its own, closed afterwards. Missing objects fail the start with an {@link IncompleteSchemaException}; a database
 * that cannot be reached now (a transient failure) is logged and left to the first use, which checks again.
 */
final class PostgresSchemaStartupCheck implements InitializingBean {

    /** How long the check may take: a bound for a server that accepts connections but does not answer. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final Log LOG = LogFactory.getLog(PostgresSchemaStartupCheck.class);

    private final ConnectionFactory factory;
    private final PostgresLockOptions options;

    /**
     * @param factory the application's PostgreSQL connection factory
     * @param options the store's options (schema and table names)
     */
    PostgresSchemaStartupCheck(ConnectionFactory factory, PostgresLockOptions options) {
        this.factory = factory;
        this.options = options;
    }

    /**
     * Runs the check, blocking the starting thread up to {@link #TIMEOUT}.
     *
     * @throws IncompleteSchemaException when objects are missing
     * @throws LockBackendException      when the check failed for good (e.g. authentication)
     */
    @Override
    public void afterPropertiesSet() {
        PostgresLockBackend backend = PostgresLockBackend.create(factory, options);
        try {
            backend.validateSchema().block(TIMEOUT);
        } catch (PostgresSchemaException e) {
            throw new IncompleteSchemaException(e.missingObjects(), e);
        } catch (LockBackendException e) {
            if (!e.isTransient()) {
                throw e;
            }
            LOG.warn("reactive-locks could not check the PostgreSQL schema at startup (" + e.getMessage() + "); the first use checks it");
        } finally {
            backend.close().block(TIMEOUT);
        }
    }
}
