package io.reactivelocks.spring;

import static io.reactivelocks.spring.RedisFixture.STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@link Locked} in two real application contexts (two instances of one service), each with its own
 * {@link LockClient} on one real redis-server.
 */
class LockedTest {

    private static RedisFixture redis;
    private static final Probe probe = new Probe();
    private static AnnotationConfigApplicationContext a;
    private static AnnotationConfigApplicationContext b;

    @BeforeAll
    static void start() {
        redis = new RedisFixture();
        a = instance("a");
        b = instance("b");
    }

    @AfterAll
    static void stop() {
        try {
            for (AnnotationConfigApplicationContext c : new AnnotationConfigApplicationContext[] {a, b}) {
                if (c != null) {
                    c.close();
                }
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @AfterEach
    void nothingLeftOnTheServer() {
        await().atMost(STEP).until(() -> redis.lockKeys().isEmpty());
    }

    /** One instance of the service: its own context and lock client, the shared probe. */
    private static AnnotationConfigApplicationContext instance(String name) {
        AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext();
        ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("instance", name, "test.lock-prefix", "tenant-7")));
        LockClient client = redis.newClient();
        ctx.registerBean("lockClient", LockClient.class, () -> client);
        ctx.registerBean(Probe.class, () -> probe);
        ctx.register(Services.class);
        ctx.refresh();
        return ctx;
    }

    @Test
    void concurrentCallsFromTwoInstancesNeverOverlapAndTheirTokensGrow() {
        Stock stockA = a.getBean(Stock.class);
        Stock stockB = b.getBean(Stock.class);
        int before = probe.tokens.size();
        // 2 x 6 Mono calls and 2 x 2 Flux calls on one sku, all in flight at once, from both instances
        Flux<Long> monos = Flux.range(0, 6).flatMap(i -> Flux.merge(stockA.reserve("apple"), stockB.reserve("apple")));
        Flux<Long> fluxes = Flux.range(0, 2).flatMap(i -> Flux.merge(stockA.restock("apple", 3), stockB.restock("apple", 3)));
        List<Long> results = Flux.merge(monos, fluxes).collectList().block(Duration.ofSeconds(30));

        assertThat(results).hasSize(12 + 12);
        assertThat(probe.maxInside.get()).as("never two runs inside at once").isEqualTo(1);
        List<Long> tokens = probe.tokens.subList(before, probe.tokens.size());
        assertThat(tokens).as("one run per call").hasSize(16);
        assertThat(tokens).as("fencing tokens strictly increase, in the order the runs entered")
                .isSorted().doesNotHaveDuplicates();
        assertThat(probe.instances.subList(before, probe.instances.size())).as("both instances ran").contains("a", "b");
    }

    @Test
    void theLockNameIsATemplateOverTheArgumentsAndTheLeaseIsInTheContext() {
        Names names = a.getBean(Names.class);
        StepVerifier.create(names.byName("pear")).expectNext("stock:pear").expectComplete().verify(STEP);
        StepVerifier.create(names.positional("order", 42)).expectNext("order:42").expectComplete().verify(STEP);
        StepVerifier.create(names.literal()).expectNext("nightly-report").expectComplete().verify(STEP);
        StepVerifier.create(names.placeholder("plum")).expectNext("tenant-7:PLUM").expectComplete().verify(STEP);
        StepVerifier.create(names.lease("fig"))
                .assertNext(seen -> {
                    assertThat(seen.name()).isEqualTo("lease:fig");
                    assertThat(seen.token()).isPositive();
                    assertThat(seen.valid()).as("valid while the method runs").isTrue();
                })
                .expectComplete().verify(STEP);
        // outside any locked method there is no lease
        StepVerifier.create(LockedContext.lease()).expectComplete().verify(STEP);
        // a name that evaluates to null fails the call, naming the method
        assertThatThrownBy(() -> names.raw(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Names.raw(String)").hasMessageContaining("evaluated to null");
    }

    @Test
    void skipAndFailDoNotInvokeTheMethodWhileAnotherInstanceHoldsTheLock() {
        TryLock tryA = a.getBean(TryLock.class);
        LockClient clientB = b.getBean(LockClient.class);
        Lease held = clientB.acquire("try:kiwi").block(STEP);
        int invoked = probe.invocations.get();
        try {
            StepVerifier.create(tryA.skip("kiwi")).expectComplete().verify(STEP);
            StepVerifier.create(tryA.fail("kiwi")).expectError(LockTimeoutException.class).verify(STEP);
            assertThat(probe.invocations.get()).as("the method was not invoked").isEqualTo(invoked);
        } finally {
            held.release().block(STEP);
        }
        StepVerifier.create(tryA.skip("kiwi")).expectNext("ran").expectComplete().verify(STEP);
        StepVerifier.create(tryA.fail("kiwi")).expectNext("ran").expectComplete().verify(STEP);
        assertThat(probe.invocations.get()).isEqualTo(invoked + 2);
    }

    @Test
    void aNestedLockedMethodOnTheSameNameReentersTheLease() {
        Reentrant re = a.getBean(Reentrant.class);
        StepVerifier.create(re.outer("melon"))
                .assertNext(tokens -> assertThat(tokens.get(1)).as("same lease inside").isEqualTo(tokens.get(0)))
                .expectComplete().verify(STEP);
        // inside a programmatic withLock on the same client, a WAIT method reenters too (the client's own reentrancy)
        LockClient client = a.getBean(LockClient.class);
        StepVerifier.create(client.withLock("re:melon", lease -> a.getBean(Inner.class).inner("melon").map(t -> t == lease.token())))
                .expectNext(true).expectComplete().verify(STEP);
    }

    @Test
    void losingTheLeaseCancelsTheMethodsPublisher() throws Exception {
        Loss loss = a.getBean(Loss.class);
        int cancelled = probe.cancelled.get();
        CompletableFuture<String> call = loss.forever("grape").toFuture();
        await().atMost(STEP).until(() -> redis.lockKeys().size() == 1);
        // the key disappears behind the holder's back: its next renewal finds the lease gone
        assertThat(redis.deleteLock("loss:grape")).isEqualTo(1);
        assertThatThrownBy(() -> call.get(STEP.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(LockLostException.class);
        assertThat(probe.cancelled.get()).as("the method's publisher was cancelled").isEqualTo(cancelled + 1);
    }

    @Test
    void aMethodThatIsNotReactiveIsRefusedAtStartupNamingIt() {
        assertThatThrownBy(() -> context(NotReactive.class))
                .hasStackTraceContaining("@Locked method io.reactivelocks.spring.LockedTest$NotReactive.count(String)")
                .hasStackTraceContaining("returns long");
        assertThatThrownBy(() -> context(BadDuration.class))
                .hasStackTraceContaining("LockedTest$BadDuration.run()")
                .hasStackTraceContaining("leaseTime 'soon' is not a duration");
        assertThatThrownBy(() -> context(NoClient.class))
                .hasStackTraceContaining("LockedTest$NoClient.run()")
                .hasStackTraceContaining("needs a LockClient bean, but the context has none");
    }

    @Test
    void theClientIsTheOneNamedOrTheOnlyOneAndAnAmbiguousChoiceIsRefused() {
        LockClient first = redis.newClient();
        LockClient second = redis.newClient();
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(Enable.class);
            ctx.registerBean("first", LockClient.class, () -> first);
            ctx.registerBean("second", LockClient.class, () -> second);
            ctx.registerBean(NamedClient.class);
            ctx.refresh();
            LockClient client = ctx.getBean(NamedClient.class).locks("pear").block(STEP);
            assertThat(client).isSameAs(second);
        }
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
                ctx.register(Enable.class);
                ctx.registerBean("first", LockClient.class, () -> first);
                ctx.registerBean("second", LockClient.class, () -> second);
                ctx.registerBean(NoClient.class);
                ctx.refresh();
            }
        }).hasStackTraceContaining("LockedTest$NoClient.run() needs a LockClient bean, but the context has 2 and none is @Primary (first, second)");
    }

    private static void context(Class<?> bean) {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.register(Enable.class);
            ctx.registerBean(bean);
            ctx.refresh();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    static class Enable {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    static class Services {

        @Bean
        Stock stock(Probe probe, @Value("${instance}") String instance) {
            return new Stock(probe, instance);
        }

        @Bean
        Names names() {
            return new Names();
        }

        @Bean
        TryLock tryLock(Probe probe) {
            return new TryLock(probe);
        }

        @Bean
        Inner inner() {
            return new Inner();
        }

        @Bean
        Reentrant reentrant(Inner inner) {
            return new Reentrant(inner);
        }

        @Bean
        Loss loss(Probe probe) {
            return new Loss(probe);
        }
    }

    /** Exclusive runs: each records its token on entry and leaves after a short asynchronous pause. */
    public static class Stock {
        private final Probe probe;
        private final String instance;

        Stock(Probe probe, String instance) {
            this.probe = probe;
            this.instance = instance;
        }

        @Locked("stock:#{#sku}")
        public Mono<Long> reserve(String sku) {
            return LockedContext.lease().flatMap(lease -> Mono.fromRunnable(() -> probe.enter(instance, lease.token()))
                    .then(Mono.delay(Duration.ofMillis(3)))
                    .then(Mono.fromRunnable(probe::exit))
                    .thenReturn(lease.token()));
        }

        @Locked(name = "stock:#{#p0}")
        public Flux<Long> restock(String sku, int units) {
            return LockedContext.lease().flatMapMany(lease -> Mono.fromRunnable(() -> probe.enter(instance, lease.token()))
                    .thenMany(Flux.range(0, units).concatMap(i -> Mono.delay(Duration.ofMillis(1)).thenReturn(lease.token())))
                    .concatWith(Mono.fromRunnable(probe::exit)));
        }
    }

    record Seen(String name, long token, boolean valid) {
    }

    public static class Names {
        @Locked("stock:#{#sku}")
        public Mono<String> byName(String sku) {
            return LockedContext.lease().map(Lease::name);
        }

        @Locked("#{#p0}:#{#a1}")
        public Mono<String> positional(String kind, int id) {
            return LockedContext.lease().map(Lease::name);
        }

        @Locked("#{#p0}")
        public Mono<String> raw(String name) {
            return LockedContext.lease().map(Lease::name);
        }

        @Locked("nightly-report")
        public Mono<String> literal() {
            return LockedContext.lease().map(Lease::name);
        }

        @Locked("${test.lock-prefix}:#{#sku.toUpperCase()}")
        public Mono<String> placeholder(String sku) {
            return LockedContext.lease("tenant-7:" + sku.toUpperCase()).map(Lease::name);
        }

        @Locked("lease:#{#sku}")
        public Mono<Seen> lease(String sku) {
            return LockedContext.lease().map(l -> new Seen(l.name(), l.token(), l.isValid()));
        }
    }

    public static class TryLock {
        private final Probe probe;

        TryLock(Probe probe) {
            this.probe = probe;
        }

        @Locked(value = "try:#{#p0}", whenHeld = Locked.WhenHeld.SKIP)
        public Mono<String> skip(String name) {
            probe.invocations.incrementAndGet();
            return Mono.just("ran");
        }

        @Locked(value = "try:#{#p0}", whenHeld = Locked.WhenHeld.FAIL, leaseTime = "3s")
        public Mono<String> fail(String name) {
            probe.invocations.incrementAndGet();
            return Mono.just("ran");
        }
    }

    public static class Inner {
        @Locked(value = "re:#{#p0}", waitTimeout = "PT2S")
        public Mono<Long> inner(String name) {
            return LockedContext.lease().map(Lease::token);
        }
    }

    public static class Reentrant {
        private final Inner inner;

        Reentrant(Inner inner) {
            this.inner = inner;
        }

        @Locked(value = "re:#{#p0}", whenHeld = Locked.WhenHeld.FAIL)
        public Mono<List<Long>> outer(String name) {
            return LockedContext.lease().flatMap(lease -> inner.inner(name).map(t -> List.of(lease.token(), t)));
        }
    }

    public static class Loss {
        private final Probe probe;

        Loss(Probe probe) {
            this.probe = probe;
        }

        @Locked("loss:#{#p0}")
        public Mono<String> forever(String name) {
            return Mono.<String>never().doOnCancel(probe.cancelled::incrementAndGet);
        }
    }

    public static class NamedClient {
        private final java.util.Map<String, LockClient> clients;

        NamedClient(java.util.Map<String, LockClient> clients) {
            this.clients = clients;
        }

        /** @return the client that holds the lease the call runs under */
        @Locked(value = "named:#{#p0}", client = "second")
        public Mono<LockClient> locks(String name) {
            return LockedContext.lease().map(lease -> clients.values().stream()
                    .filter(c -> c.metrics().heldLeases().stream().anyMatch(l -> l.owner().equals(lease.owner())))
                    .findFirst().orElseThrow());
        }
    }

    public static class NotReactive {
        @Locked("x")
        public long count(String name) {
            return 0;
        }
    }

    public static class BadDuration {
        @Locked(value = "x", leaseTime = "soon")
        public Mono<Void> run() {
            return Mono.empty();
        }
    }

    public static class NoClient {
        private final AtomicInteger calls = new AtomicInteger();

        @Locked("x")
        public Mono<Integer> run() {
            return Mono.fromSupplier(calls::incrementAndGet);
        }
    }
}
