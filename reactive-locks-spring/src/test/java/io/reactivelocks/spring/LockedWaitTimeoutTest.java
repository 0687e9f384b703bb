package io.reactivelocks.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * How long a {@link Locked} call waits for a lock held elsewhere, on the in-memory store and virtual time: bounded
 * by default (30 s) when neither the method nor its client sets a wait timeout, the client's when it has one, and
 * unbounded only when asked for.
 */
class LockedWaitTimeoutTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LocalLockStore store;
    private final List<LockClient> clients = new ArrayList<>();
    private final List<AnnotationConfigApplicationContext> contexts = new ArrayList<>();

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        store = new LocalLockStore(vts, LockClock.of(vts));
    }

    @AfterEach
    void tearDown() {
        contexts.forEach(AnnotationConfigApplicationContext::close);
        clients.forEach(c -> c.close().block(VERIFY));
        vts.dispose();
    }

    /** A client on the shared store and virtual time; {@code wait} null: the library's default, wait until cancelled. */
    private LockClient client(Duration wait) {
        LockOptions.Builder b = LockOptions.builder().scheduler(vts).clock(LockClock.of(vts));
        if (wait != null) { // null: the client leaves its wait timeout at the library's default
            b.waitTimeout(wait);
        }
        LockClient c = LocalLockBackend.client(store, b.build());
        clients.add(c);
        return c;
    }

    private Waiter waiter(LockClient client, Class<?> config, Map<String, Object> properties) {
        AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext();
        ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
        ctx.registerBean("lockClient", LockClient.class, () -> client);
        ctx.registerBean(Waiter.class);
        ctx.register(config);
        ctx.refresh();
        contexts.add(ctx);
        return ctx.getBean(Waiter.class);
    }

    /** A call subscribed to: its value and its error, each null until signalled. */
    private static final class Call {
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final AtomicReference<String> value = new AtomicReference<>();
        final Disposable subscription;

        Call(Mono<String> call) {
            subscription = call.subscribe(value::set, error::set);
        }
    }

    private Lease holdElsewhere(String name) {
        return client(null).acquire(name).block(VERIFY);
    }

    @Test
    void aCallWhoseMethodAndClientSetNoWaitTimeoutFailsAfterThirtySeconds() {
        Waiter waiter = waiter(client(null), Enable.class, Map.of());
        holdElsewhere("stock:fig");
        Call call = new Call(waiter.byDefault("fig"));
        vts.advanceTimeBy(Duration.ofSeconds(29));
        assertThat(call.error.get()).as("still waiting at 29 s").isNull();
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(call.error.get()).isInstanceOf(LockTimeoutException.class)
                .satisfies(e -> assertThat(((LockTimeoutException) e).waitTimeout()).isEqualTo(Duration.ofSeconds(30)));
        assertThat(call.value.get()).isNull();
    }

    @Test
    void theClientsOwnWaitTimeoutWins() {
        Waiter waiter = waiter(client(Duration.ofSeconds(2)), Enable.class, Map.of());
        holdElsewhere("stock:kiwi");
        Call call = new Call(waiter.byDefault("kiwi"));
        vts.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(call.error.get()).isInstanceOf(LockTimeoutException.class)
                .satisfies(e -> assertThat(((LockTimeoutException) e).waitTimeout()).isEqualTo(Duration.ofSeconds(2)));
    }

    @Test
    void theDefaultIsSetOnTheEnablingAnnotationWithPlaceholders() {
        Waiter waiter = waiter(client(null), EnableFromProperty.class, Map.of("locks.wait", "500ms"));
        holdElsewhere("stock:lime");
        Call call = new Call(waiter.byDefault("lime"));
        vts.advanceTimeBy(Duration.ofMillis(500));
        assertThat(call.error.get()).isInstanceOf(LockTimeoutException.class)
                .satisfies(e -> assertThat(((LockTimeoutException) e).waitTimeout()).isEqualTo(Duration.ofMillis(500)));
    }

    @Test
    void waitingUntilCancelledIsExplicitOnTheMethodOrOnTheEnablingAnnotation() {
        Waiter waiter = waiter(client(null), Enable.class, Map.of());
        Waiter unbounded = waiter(client(null), EnableFromProperty.class, Map.of("locks.wait", Locked.UNTIL_CANCELLED));
        Lease held = holdElsewhere("stock:pear");
        Call forever = new Call(waiter.untilCancelled("pear"));
        Call byDefault = new Call(unbounded.byDefault("pear"));
        vts.advanceTimeBy(Duration.ofHours(2));
        assertThat(forever.error.get()).isNull();
        assertThat(byDefault.error.get()).isNull();
        held.release().block(VERIFY);
        vts.advanceTimeBy(Duration.ofSeconds(10)); // one waiter after the other, at the latest on their backoff steps
        assertThat(forever.value.get()).isEqualTo("ran");
        assertThat(byDefault.value.get()).isEqualTo("ran");
        assertThat(forever.error.get()).isNull();
        assertThat(byDefault.error.get()).isNull();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    static class Enable {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking(waitTimeout = "${locks.wait}")
    static class EnableFromProperty {
    }

    public static class Waiter {
        @Locked("stock:#{#p0}")
        public Mono<String> byDefault(String sku) {
            return Mono.just("ran");
        }

        @Locked(value = "stock:#{#p0}", waitTimeout = Locked.UNTIL_CANCELLED)
        public Mono<String> untilCancelled(String sku) {
            return Mono.just("ran");
        }
    }
}
