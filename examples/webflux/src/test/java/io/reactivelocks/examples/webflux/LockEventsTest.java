package io.reactivelocks.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class LockEventsTest extends PostgresBackedTest {

    private static final ParameterizedTypeReference<ServerSentEvent<LockEvent>> EVENT = new ParameterizedTypeReference<>() {
    };

    @Autowired
    LockClient locks;

    @Test
    void streamsFreeThenHeldWithTheTokenThenFree() {
        String name = "stock:" + uniqueSku("events");
        Flux<ServerSentEvent<LockEvent>> events = web().get().uri("/locks/{name}/events", name)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .retrieve()
                .bodyToFlux(EVENT);
        // taken and released without blocking: these run on whatever thread delivers the events
        Mono<Lease> taken = locks.acquire(name).cache();
        AtomicLong heldToken = new AtomicLong();

        StepVerifier.create(events.take(3))
                .assertNext(e -> {
                    assertThat(e.event()).isEqualTo(LockEvent.FREE);
                    assertThat(e.data()).isEqualTo(new LockEvent(name, LockEvent.FREE, null, null));
                })
                .then(() -> taken.subscribe())
                .assertNext(e -> {
                    assertThat(e.event()).isEqualTo(LockEvent.HELD);
                    assertThat(e.data().name()).isEqualTo(name);
                    assertThat(e.data().state()).isEqualTo(LockEvent.HELD);
                    assertThat(e.id()).isEqualTo(Long.toString(e.data().token()));
                    heldToken.set(e.data().token());
                })
                .then(() -> taken.flatMap(Lease::release).subscribe())
                .assertNext(e -> assertThat(e.data()).isEqualTo(new LockEvent(name, LockEvent.FREE, null, null)))
                .expectComplete()
                .verify(TIMEOUT);

        Lease lease = taken.block(TIMEOUT);
        assertThat(heldToken.get()).isEqualTo(lease.token());
        assertThat(lease.isValid()).as("released").isFalse();
    }

    @Test
    void theHeldEventNamesTheOwnerOfTheLease() {
        String name = "stock:" + uniqueSku("owner");
        Lease lease = locks.acquire(name).block(TIMEOUT);
        try {
            StepVerifier.create(web().get().uri("/locks/{name}/events", name).accept(MediaType.TEXT_EVENT_STREAM)
                            .retrieve().bodyToFlux(EVENT).take(1))
                    .assertNext(e -> assertThat(e.data()).isEqualTo(new LockEvent(name, LockEvent.HELD, lease.owner(), lease.token())))
                    .expectComplete()
                    .verify(TIMEOUT);
        } finally {
            lease.release().block(TIMEOUT);
        }
    }
}
