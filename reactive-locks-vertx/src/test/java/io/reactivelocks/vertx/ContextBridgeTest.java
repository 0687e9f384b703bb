package io.reactivelocks.vertx;

import static io.reactivelocks.vertx.VertxTestSupport.call;
import static io.reactivelocks.vertx.VertxTestSupport.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The bridge alone, on plain Reactor publishers: context, demand, end, failure and cancel of a {@link LockStream}. */
class ContextBridgeTest {

    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() throws Exception {
        join(vertx.close());
    }

    @Test
    void pauseAndFetchAreReactorDemandAndTheEndComesAfterTheLastElement() throws Exception {
        Context ctx = vertx.getOrCreateContext();
        AtomicLong requested = new AtomicLong();
        Queue<Integer> got = new ConcurrentLinkedQueue<>();
        Promise<Void> ended = Promise.promise();
        Flux<Integer> source = Flux.range(1, 5).doOnRequest(n -> requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b));
        LockStream<Integer> stream = call(ctx, () -> {
            LockStream<Integer> s = ContextBridge.toStream(source, ctx).pause();
            s.endHandler(v -> ended.complete());
            s.handler(i -> {
                VertxTestSupport.assertOn(ctx);
                got.add(i);
            });
            return Future.succeededFuture(s);
        });
        assertThat(got).isEmpty();
        assertThat(requested.get()).isZero();
        stream.fetch(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> got.size() == 2);
        assertThat(requested.get()).isEqualTo(2);
        assertThat(ended.future().isComplete()).isFalse();
        stream.resume();
        join(ended.future());
        assertThat(got).containsExactly(1, 2, 3, 4, 5);
        assertThat(stream.isDone()).isTrue();
    }

    @Test
    void aFailureGoesToTheExceptionHandlerAndNotTheEndHandler() throws Exception {
        Context ctx = vertx.getOrCreateContext();
        IllegalStateException boom = new IllegalStateException("boom");
        Promise<Throwable> failed = Promise.promise();
        AtomicBoolean ended = new AtomicBoolean();
        ctx.runOnContext(v -> ContextBridge.toStream(Flux.<Integer>error(boom), ctx)
                .exceptionHandler(failed::complete)
                .endHandler(e -> ended.set(true))
                .handler(i -> { }));
        assertThat(join(failed.future())).isSameAs(boom);
        assertThat(ended).isFalse();
    }

    @Test
    void cancelStopsTheSubscriptionAndNothingIsDeliveredAfterIt() throws Exception {
        Context ctx = vertx.getOrCreateContext();
        AtomicBoolean cancelled = new AtomicBoolean();
        Queue<Long> got = new ConcurrentLinkedQueue<>();
        AtomicBoolean ended = new AtomicBoolean();
        Flux<Long> ticks = Flux.interval(Duration.ofMillis(10)).doOnCancel(() -> cancelled.set(true));
        LockStream<Long> stream = call(ctx, () -> Future.succeededFuture(
                ContextBridge.toStream(ticks, ctx).endHandler(e -> ended.set(true)).handler(got::add)));
        await().atMost(Duration.ofSeconds(5)).until(() -> got.size() >= 2);
        call(ctx, stream::cancel);
        assertThat(cancelled).isTrue();
        int seen = got.size();
        call(ctx, () -> vertx.timer(50));
        assertThat(got).hasSize(seen);
        assertThat(ended).isFalse();
        assertThat(stream.isDone()).isTrue();
        call(ctx, stream::cancel); // idempotent
    }

    @Test
    void toFutureCompletesOnTheContextAndEmptyIsNull() throws Exception {
        Context ctx = vertx.getOrCreateContext();
        // the Mono completes on a Reactor thread; the future's callbacks run on ctx (checked by call)
        assertThat(call(ctx, () -> ContextBridge.toFuture(Mono.just("x").delayElement(Duration.ofMillis(5)), ctx))).isEqualTo("x");
        Object empty = call(ctx, () -> ContextBridge.toFuture(Mono.empty(), ctx));
        assertThat(empty).isNull();
    }

    @Test
    void toMonoRunsTheWorkOnTheContextOnlyOnSubscribe() {
        Context ctx = vertx.getOrCreateContext();
        Queue<Context> ranOn = new ConcurrentLinkedQueue<>();
        Mono<String> mono = ContextBridge.toMono(() -> {
            ranOn.add(Vertx.currentContext());
            return Future.succeededFuture("done");
        }, ctx);
        assertThat(ranOn).isEmpty();
        assertThat(mono.block(Duration.ofSeconds(5))).isEqualTo("done");
        assertThat(List.copyOf(ranOn)).containsExactly(ctx);
        assertThat(ContextBridge.toMono(() -> Future.<String>succeededFuture(), ctx).blockOptional(Duration.ofSeconds(5))).isEmpty();
    }

    @Test
    void toFluxReadsAReadStreamWithReactorDemandOnItsContextAndCancelStopsIt() throws Exception {
        Context ctx = vertx.getOrCreateContext();
        AtomicLong requested = new AtomicLong();
        AtomicBoolean cancelled = new AtomicBoolean();
        Flux<Integer> source = Flux.range(1, 100)
                .doOnRequest(n -> requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b))
                .doOnCancel(() -> cancelled.set(true));
        Queue<Boolean> onContext = new ConcurrentLinkedQueue<>();
        Flux<Integer> read = ContextBridge.toFlux(() -> {
            onContext.add(Vertx.currentContext() == ctx);
            return ContextBridge.toStream(source, ctx);
        }, ctx);
        StepVerifier.create(read, 0)
                .thenRequest(3)
                .expectNext(1, 2, 3)
                .then(() -> assertThat(requested.get()).as("the stream's demand").isLessThan(100))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        await().atMost(Duration.ofSeconds(5)).untilTrue(cancelled);
        assertThat(onContext).containsExactly(true);

        StepVerifier.create(ContextBridge.toFlux(() -> ContextBridge.toStream(Flux.<Integer>error(new IllegalStateException("boom")), ctx), ctx))
                .expectErrorMessage("boom")
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(ContextBridge.toFlux(() -> ContextBridge.toStream(Flux.just(7), ctx), ctx))
                .expectNext(7)
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }
}
