package io.reactivelocks.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link IncompleteSchemaException} at the top of Spring Boot's startup failure report: the missing objects
 * first, one a line, then what to do — create them from {@code docs/ddl/postgresql.sql}, or change
 * {@code reactive-locks.postgres.schema-mode}. Registered in {@code META-INF/spring.factories}.
 */
public final class IncompleteSchemaFailureAnalyzer extends AbstractFailureAnalyzer<IncompleteSchemaException> {

    /** Made by Spring Boot's {@code FailureAnalyzers}. */
    public IncompleteSchemaFailureAnalyzer() {
    }

    /**
     * @param rootFailure the start-up failure
     * @param cause       the incomplete schema found in its causes
     * @return the description (the missing objects) and the action (the DDL file or the property)
     */
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, IncompleteSchemaException cause) {
        StringBuilder description = new StringBuilder("The PostgreSQL schema of reactive-locks misses ")
                .append(cause.missingObjects().size()).append(cause.missingObjects().size() == 1 ? " object:" : " objects:");
        for (String object : cause.missingObjects()) {
            description.append("\n    - ").append(object);
        }
        description.append("\n").append(IncompleteSchemaException.PROPERTY)
                .append(" is validate, so reactive-locks creates nothing and checked them at startup.");
        String action = "Create the missing objects with docs/ddl/postgresql.sql from the reactive-locks repository, run as a"
                + " role that may create them (then grant the application's role SELECT, INSERT, UPDATE, DELETE on the tables"
                + " and USAGE, SELECT, UPDATE on the sequence), or set " + IncompleteSchemaException.PROPERTY
                + "=create to let the application create them (its role then needs the CREATE privilege on the schema).";
        return new FailureAnalysis(description.toString(), action, cause);
    }
}
