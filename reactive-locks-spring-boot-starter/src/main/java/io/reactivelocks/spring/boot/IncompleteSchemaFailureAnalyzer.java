package io.reactivelocks.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link IncompleteSchemaException} at the top of Spring Boot's startup failure report: the missing objects
 * (or, when all exist, the privileges the role lacks on them) first, one a line, then what to do — create them from
 * {@code docs/ddl/postgresql.sql} or change {@code reactive-locks.postgres.schema-mode}; grant the privileges. Registered in {@code META-INF/spring.factories}.
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
        int n = cause.missingObjects().size();
        // the check names missing objects, or — when all exist — the privileges the application's role lacks on them
        boolean privileges = cause.missingObjects().stream().allMatch(o -> o.startsWith("privilege "));
        StringBuilder description = new StringBuilder("The PostgreSQL schema of reactive-locks misses ").append(n)
                .append(privileges ? (n == 1 ? " privilege" : " privileges") + " of the application's database role:"
                        : n == 1 ? " object:" : " objects:");
        for (String object : cause.missingObjects()) {
            description.append("\n    - ").append(object);
        }
        description.append("\n").append(IncompleteSchemaException.PROPERTY)
                .append(" is validate, so reactive-locks creates nothing and checked them at startup.");
        if (privileges) {
            String action = "Grant the application's role the privileges as the owner of the objects (USAGE on the schema;"
                    + " SELECT, INSERT, UPDATE, DELETE on the tables; USAGE, SELECT, UPDATE on the sequence; EXECUTE on the"
                    + " functions), e.g. GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app;"
                    + " GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO app.";
            return new FailureAnalysis(description.toString(), action, cause);
        }
        String action = "Create the missing objects with docs/ddl/postgresql.sql from the reactive-locks repository, run as a"
                + " role that may create them (then grant the application's role SELECT, INSERT, UPDATE, DELETE on the tables"
                + " and USAGE, SELECT, UPDATE on the sequence), or set " + IncompleteSchemaException.PROPERTY
                + "=create to let the application create them (its role then needs the CREATE privilege on the schema).";
        return new FailureAnalysis(description.toString(), action, cause);
    }
}
