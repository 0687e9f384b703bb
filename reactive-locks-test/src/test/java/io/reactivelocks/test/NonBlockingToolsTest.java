package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The checkers are called from Reactor non-blocking threads in backend tests: BlockHound (installed in every test JVM) must stay quiet. */
class NonBlockingToolsTest {

    @Test
    void checkerAndResourceAreUsableOnParallelThreads() {
        MutualExclusionChecker checker = new MutualExclusionChecker();
        FencedResource resource = FencedResource.fenced();
        Flux.range(0, 4_000)
                .parallel(4)
                .runOn(Schedulers.parallel())
                .flatMap(i -> Mono.fromRunnable(() -> {
                    MutualExclusionChecker.Hold h = checker.begin("n" + (i % 3), "owner-" + i, i);
                    resource.write("k" + (i % 3), i, "v" + i);
                    h.end();
                }))
                .sequential()
                .then()
                .block(Duration.ofSeconds(30));
        assertThat(resource.writes()).hasSize(4_000);
        assertThat(checker.intervals("n0").size() + checker.intervals("n1").size() + checker.intervals("n2").size())
                .isEqualTo(4_000);
    }
}
