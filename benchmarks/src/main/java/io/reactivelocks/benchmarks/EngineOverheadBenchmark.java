package io.reactivelocks.benchmarks;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * B5: what the engine costs on top of the store — acquire + release of an uncontended lock
 * against a stub backend that answers at once. Run with {@code -prof gc} for bytes per operation:
 * {@code ./mvnw -q -pl benchmarks -am install -DskipTests && java -cp ... org.openjdk.jmh.Main EngineOverhead -prof gc}
 * (benchmarks/run.sh does this).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EngineOverheadBenchmark {

    private LockClient client;
    private StubBackend stub;

    /** A store that grants every request at once and forgets it on release. */
    static final class StubBackend implements LockBackend {
        private final AtomicLong tokens = new AtomicLong();
        private final Duration ttl = Duration.ofSeconds(30);

        @Override
        public String name() {
            return "stub";
        }

        @Override
        public Mono<Attempt> tryGrant(GrantRequest request) {
            return Mono.fromSupplier(() -> Attempt.granted(tokens.incrementAndGet(), ttl));
        }

        @Override
        public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
            return Mono.fromSupplier(() -> batch.stream().map(r -> RenewOutcome.renewed(ttl)).toList());
        }

        @Override
        public Mono<Boolean> release(String name, String owner) {
            return Mono.just(Boolean.TRUE);
        }

        @Override
        public Mono<Holder> inspect(String name) {
            return Mono.empty();
        }

        @Override
        public Flux<LockEvent> events(String name) {
            return Flux.never();
        }

        @Override
        public Mono<Void> close() {
            return Mono.empty();
        }
    }

    /** Records completion without blocking or allocating a latch per operation. */
    static final class Sink implements CoreSubscriber<Object> {
        boolean done;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object o) {
        }

        @Override
        public void onError(Throwable t) {
            throw new IllegalStateException(t);
        }

        @Override
        public void onComplete() {
            done = true;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        stub = new StubBackend();
        client = LockClient.create(stub, LockOptions.defaults());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close().block(Duration.ofSeconds(5));
    }

    /** @return whether the pair completed (the stub answers synchronously) */
    @Benchmark
    public boolean tryAcquireThenRelease() {
        Sink sink = new Sink();
        client.tryAcquire("bench").flatMap(Lease::release).subscribe(sink);
        return sink.done;
    }

    /** @return whether the pair completed (the waiting acquire, as B1 uses it) */
    @Benchmark
    public boolean acquireThenRelease() {
        Sink sink = new Sink();
        client.acquire("bench").flatMap(Lease::release).subscribe(sink);
        return sink.done;
    }

    /** @return whether the pair completed */
    @Benchmark
    public boolean withLockEmptyBody() {
        Sink sink = new Sink();
        client.withLock("bench", lease -> Mono.just(1)).subscribe(sink);
        return sink.done;
    }
}
