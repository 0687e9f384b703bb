package io.reactivelocks.examples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.examples.webflux.StockRepository.Stock;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

class StockReservationTest extends PostgresBackedTest {

    @Autowired
    LockClient locks;

    @Autowired
    StockRepository stock;

    private record Answer(int status, Reservation body) {
    }

    private void putStock(String sku, long available) {
        http().put().uri("/stock/{sku}?available={n}", sku, available).exchange().expectStatus().isOk();
    }

    private Stock getStock(String sku) {
        return http().get().uri("/stock/{sku}", sku).exchange().expectStatus().isOk()
                .expectBody(Stock.class).returnResult().getResponseBody();
    }

    @Test
    void concurrentReservationsNeverOversellNorLoseAnUpdate() {
        String sku = uniqueSku("apple");
        putStock(sku, 50);

        // 200 requests of 1 unit, 32 in flight at a time, over real HTTP, from a non-blocking client
        WebClient web = web();
        List<Answer> answers = Flux.range(0, 200)
                .flatMap(i -> web.post().uri("/stock/{sku}/reserve?qty=1", sku)
                        .exchangeToMono(r -> r.bodyToMono(Reservation.class)
                                .map(body -> new Answer(r.statusCode().value(), body))), 32)
                .collectList()
                .block(TIMEOUT);

        assertThat(answers).hasSize(200);
        Map<Integer, List<Answer>> byStatus = answers.stream().collect(Collectors.groupingBy(Answer::status));
        assertThat(byStatus.keySet()).containsOnly(200, 409);
        List<Answer> reserved = byStatus.get(200);
        List<Answer> refused = byStatus.get(409);
        assertThat(reserved).as("exactly the stock is sold").hasSize(50);
        assertThat(refused).hasSize(150).allSatisfy(a -> {
            assertThat(a.body().outcome()).isEqualTo(Reservation.INSUFFICIENT);
            assertThat(a.body().available()).isZero();
        });
        // no lost update: every successful reservation saw a different stock level, 49 down to 0
        assertThat(reserved).extracting(a -> a.body().available())
                .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 50).boxed().toList());
        // and each ran under its own lease: the tokens are distinct, and grow with each write
        List<Reservation> inWriteOrder = reserved.stream().map(Answer::body)
                .sorted((a, b) -> Long.compare(b.available(), a.available())).toList();
        assertThat(inWriteOrder).extracting(Reservation::token).isSorted().doesNotHaveDuplicates();

        Stock after = getStock(sku);
        assertThat(after.available()).isZero();
        assertThat(after.fence()).isEqualTo(inWriteOrder.get(49).token());
    }

    @Test
    void aStaleTokenIsRejectedByTheFencedUpdate() {
        String sku = uniqueSku("pear");
        putStock(sku, 10);
        String name = StockController.lockName(sku);

        Lease first = locks.acquire(name).block(TIMEOUT);
        first.release().block(TIMEOUT);
        Lease second = locks.acquire(name).block(TIMEOUT);
        try {
            assertThat(second.token()).isGreaterThan(first.token());
            assertThat(stock.write(sku, 7, second.token()).block(TIMEOUT)).as("current holder").isTrue();
            // the first holder wakes up late (a GC pause, a lease that expired) and writes with its old token
            assertThat(stock.write(sku, 99, first.token()).block(TIMEOUT)).as("stale token").isFalse();
            assertThat(stock.upsert(sku, 99, first.token()).block(TIMEOUT)).as("stale token, upsert").isFalse();
            assertThat(stock.write(sku, 7, second.token()).block(TIMEOUT)).as("equal token: the same lease writing again")
                    .isTrue();
        } finally {
            second.release().block(TIMEOUT);
        }
        assertThat(getStock(sku)).isEqualTo(new Stock(sku, 7, second.token()));

        // the next request runs under a newer lease and is accepted again
        http().post().uri("/stock/{sku}/reserve?qty=2", sku).exchange().expectStatus().isOk()
                .expectBody(Reservation.class).value(r -> {
                    assertThat(r.outcome()).isEqualTo(Reservation.RESERVED);
                    assertThat(r.available()).isEqualTo(5);
                    assertThat(r.token()).isGreaterThan(second.token());
                });
    }

    @Test
    void answersForBadRequestsUnknownSkusAndTooLittleStock() {
        String sku = uniqueSku("plum");
        http().post().uri("/stock/{sku}/reserve?qty=1", sku).exchange().expectStatus().isNotFound();
        http().get().uri("/stock/{sku}", sku).exchange().expectStatus().isNotFound();
        putStock(sku, 3);
        http().post().uri("/stock/{sku}/reserve?qty=0", sku).exchange().expectStatus().isBadRequest();
        http().put().uri("/stock/{sku}?available=-1", sku).exchange().expectStatus().isBadRequest();
        http().post().uri("/stock/{sku}/reserve?qty=4", sku).exchange().expectStatus().isEqualTo(HttpStatus.CONFLICT)
                .expectBody(Reservation.class).value(r -> {
                    assertThat(r.outcome()).isEqualTo(Reservation.INSUFFICIENT);
                    assertThat(r.available()).isEqualTo(3);
                });
        http().post().uri("/stock/{sku}/reserve?qty=3", sku).exchange().expectStatus().isOk();
        assertThat(getStock(sku).available()).isZero();
        // nothing left behind: every lock taken by these requests was released
        assertThat(Mono.from(locks.observe(StockController.lockName(sku))).block(TIMEOUT).isHeld()).isFalse();
    }

}
