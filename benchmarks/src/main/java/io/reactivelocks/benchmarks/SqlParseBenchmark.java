package io.reactivelocks.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What r2dbc-postgresql's client-side SQL tokenizer costs per statement (issue 30, B1 on
 * PostgreSQL): every {@code Connection.createStatement(sql)} parses the whole text again, to find
 * its {@code $n} parameters and statements — there is no cache — so the length of our statements is
 * client CPU on every acquire and release, paid by ours and by the raw floor alike, but not by
 * ShedLock's or the simplest lock's short statements. A JFR profile of B1 at c = 64 had the parser in
 * 11.5 % of the client's samples. Statements: ours as the backend sends them (the scripts with their
 * whole-line comments dropped, the default names filled in), the simplest lock's (B1's contender),
 * and what a call of a server-side function would send instead.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests dependency:build-classpath -Dmdep.outputFile=cp.txt
 * java -cp benchmarks/target/classes:$(cat benchmarks/cp.txt) org.openjdk.jmh.Main SqlParse -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SqlParseBenchmark {

    /** The statement parsed. */
    @Param({"acquire_row", "release", "acquire", "simple_take", "simple_release", "function_call"})
    public String statement;

    private String sql;
    private MethodHandle parse;

    @Setup
    public void setUp() throws ReflectiveOperationException {
        sql = switch (statement) {
            case "acquire_row", "release", "acquire" -> PostgresScripts.render(statement + ".sql");
            case "simple_take" -> "INSERT INTO bench_simple_locks(name, owner, locked_until) "
                    + "VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT DO NOTHING";
            case "simple_release" -> "DELETE FROM bench_simple_locks WHERE name = $1 AND owner = $2";
            case "function_call" -> "SELECT * FROM \"public\".\"reactive_locks_acquire_row\"($1, $2, $3, $4, $5, $6)";
            default -> throw new IllegalArgumentException(statement);
        };
        // the parser is public in a package-private class of the driver
        Method m = Class.forName("io.r2dbc.postgresql.PostgresqlSqlParser").getMethod("parse", String.class);
        m.setAccessible(true);
        parse = MethodHandles.lookup().unreflect(m);
    }

    /** @return the parsed statement (what {@code createStatement} builds first) */
    @Benchmark
    public Object parse() throws Throwable {
        return parse.invoke(sql);
    }
}
