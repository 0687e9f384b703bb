package io.reactivelocks.safety.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.safety.check.CheckVerdict.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every checker can fail: a hand-made bad history of each kind is caught (with the events that show it),
 * and a good one passes.
 */
class HistoryCheckersTest {

    private static final String N = "lock";

    /** Two holders one after the other, each reading then writing value + 1 with its token. */
    private static Histories goodMutex() {
        return Histories.of(N, "mutex")
                .acquire("w0", N, 10, "m", 0, 5, 1_000)
                .read("w0", N, 10, 10, 12, 0L, 0)
                .write("w0", N, 10, 1, 14, 16, true, 1)
                .release("w0", N, 10, 20, 1_000)
                .acquire("w1", N, 11, "m", 8, 30, 1_030)
                .read("w1", N, 11, 32, 34, 1L, 2)
                .write("w1", N, 11, 2, 36, 38, true, 3)
                .release("w1", N, 11, 40, 1_030);
    }

    private static CheckVerdict check(HistoryChecker checker, Histories h) {
        CheckVerdict v = checker.check(h.build());
        System.out.println("[check] " + v);
        return v;
    }

    @Test
    void aGoodHistoryPassesEveryChecker() {
        History h = goodMutex().build();
        for (HistoryChecker c : HistoryChecker.all()) {
            assertThat(c.check(h).status()).as(c.name() + ": " + c.check(h)).isEqualTo(Status.VALID);
        }
    }

    @Test
    void aHistoryReadBackFromItsLinesIsTheSame() {
        History h = goodMutex().fault("pause-worker", 50, 60).writeUnknown("w1", N, 11, 9, 70, 80).build();
        History back = History.parse(h.lines());
        assertThat(back.events()).isEqualTo(h.events());
        assertThat(back.names()).isEqualTo(h.names());
        assertThat(back.permits()).isEqualTo(h.permits());
    }

    @Test
    void mutualExclusionCatchesTwoLeasesInterleavedAtTheArbiter() {
        // w0 read with token 10, w1 read with 11, then the arbiter accepted w0's write with 10
        Histories h = Histories.of(N, "mutex")
                .acquire("w0", N, 10, "m", 0, 5, 1_000)
                .read("w0", N, 10, 10, 12, 0L, 0)
                .acquire("w1", N, 11, "m", 8, 13, 1_030)
                .read("w1", N, 11, 14, 15, 0L, 1)
                .write("w0", N, 10, 1, 16, 18, true, 2);
        CheckVerdict v = check(new ArbiterExclusionChecker(), h);
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).extracting(HistoryEvent::token).contains(10L, 11L);
    }

    @Test
    void mutualExclusionLetsALateWriteBeRefused() {
        Histories h = Histories.of(N, "mutex")
                .acquire("w0", N, 10, "m", 0, 5, 100)
                .read("w0", N, 10, 10, 12, 0L, 0)
                .acquire("w1", N, 11, "m", 8, 130, 1_130)
                .read("w1", N, 11, 132, 134, 0L, 1)
                .write("w0", N, 10, 1, 140, 141, false, 2)
                .write("w1", N, 11, 1, 142, 144, true, 3);
        assertThat(check(new ArbiterExclusionChecker(), h).status()).isEqualTo(Status.VALID);
        assertThat(check(new LinearizabilityChecker(), h).status()).isEqualTo(Status.VALID);
    }

    @Test
    void tokenOrderCatchesARegression() {
        // w1 asked after w0's grant of 10 had completed, and got 9
        Histories h = Histories.of(N, "mutex")
                .acquire("w0", N, 10, "m", 0, 5, 1_000)
                .release("w0", N, 10, 20, 1_000)
                .acquire("w1", N, 9, "m", 25, 30, 1_030);
        CheckVerdict v = check(new TokenOrderChecker(), h);
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).extracting(HistoryEvent::token).containsExactly(10L, 9L);
    }

    @Test
    void tokenOrderCatchesOneTokenGrantedTwice() {
        Histories h = Histories.of(N, "mutex")
                .acquire("w0", N, 10, "m", 0, 5, 1_000)
                .acquire("w1", N, 10, "m", 1, 6, 1_000);
        assertThat(check(new TokenOrderChecker(), h).status()).isEqualTo(Status.INVALID);
    }

    @Test
    void tokenOrderDoesNotOrderConcurrentAcquiresNorTwoReaders() {
        Histories h = Histories.of(N, "rwlock")
                .acquire("w0", N, 11, "r", 0, 5, 1_000)   // asked before w1's grant completed: any order
                .acquire("w1", N, 10, "r", 1, 4, 1_000)
                .acquire("w2", N, 10, "r", 6, 7, 1_000);  // a reader beside a reader may share
        assertThat(check(new TokenOrderChecker(), h).status()).isEqualTo(Status.VALID);
    }

    @Test
    void permitLimitCatchesNPlusOneHolders() {
        Histories h = Histories.of(N, "semaphore").permits(2)
                .acquire("w0", N, 1, "s", 0, 10, 1_000)
                .acquire("w1", N, 2, "s", 0, 20, 1_000)
                .acquire("w2", N, 3, "s", 0, 30, 1_000)
                .release("w0", N, 1, 40, 1_000);
        CheckVerdict v = check(new PermitLimitChecker(), h);
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).extracting(HistoryEvent::token).contains(1L, 2L, 3L);
    }

    @Test
    void permitLimitCountsOnlyValidLeases() {
        // w0's lease expired at 25 (it was frozen; its release came late): the third permit is fine
        Histories h = Histories.of(N, "semaphore").permits(2)
                .acquire("w0", N, 1, "s", 0, 10, 25)
                .acquire("w1", N, 2, "s", 0, 20, 1_000)
                .acquire("w2", N, 3, "s", 0, 30, 1_000)
                .release("w0", N, 1, 400, 25);
        assertThat(check(new PermitLimitChecker(), h).status()).isEqualTo(Status.VALID);
    }

    @Test
    void readWriteCatchesAWriterBesideAReader() {
        Histories h = Histories.of(N, "rwlock")
                .acquire("w0", N, 5, "r", 0, 10, 1_000)
                .acquire("w1", N, 6, "w", 0, 50, 1_000)
                .release("w0", N, 5, 100, 1_000);
        CheckVerdict v = check(new ReadWriteChecker(), h);
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).extracting(HistoryEvent::token).contains(5L, 6L);
    }

    @Test
    void readWriteLetsReadersShare() {
        Histories h = Histories.of(N, "rwlock")
                .acquire("w0", N, 5, "r", 0, 10, 1_000)
                .acquire("w1", N, 5, "r", 0, 20, 1_000)
                .release("w0", N, 5, 100, 1_000)
                .release("w1", N, 5, 110, 1_000)
                .acquire("w2", N, 6, "w", 0, 120, 1_000);
        assertThat(check(new ReadWriteChecker(), h).status()).isEqualTo(Status.VALID);
    }

    /** w0 in line at 12, w1 asked at 20 (before w0's grant): w0 must be granted first. */
    private static Histories fifo(long tokenOfFirst, long tokenOfSecond) {
        return Histories.of(N, "fair")
                .acquire("w2", N, 1, "f", 0, 1, 1_000)
                .acquire("w0", N, tokenOfFirst, "f", 9, 50, 1_050)
                .enqueue("w0", N, 10)
                .inLine("w0", N, 12)
                .acquire("w1", N, tokenOfSecond, "f", 19, 60, 1_060)
                .enqueue("w1", N, 20)
                .inLine("w1", N, 22);
    }

    @Test
    void fifoCatchesAWaiterGrantedBeforeOneAheadOfIt() {
        CheckVerdict v = check(new FifoChecker(), fifo(3, 2));
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).extracting(HistoryEvent::client).contains("w0", "w1");
        assertThat(check(new FifoChecker(), fifo(2, 3)).status()).isEqualTo(Status.VALID);
    }

    @Test
    void fifoDoesNotJudgeWaitsDuringAFault() {
        assertThat(check(new FifoChecker(), fifo(3, 2).fault("pause-server", 30, 40)).status()).isEqualTo(Status.VALID);
    }

    @Test
    void linearizabilityCatchesAReadOfAValueNeverWritten() {
        Histories h = goodMutex().acquire("w2", N, 12, "m", 45, 50, 1_050).read("w2", N, 12, 52, 54, 7L, 4);
        CheckVerdict v = check(new LinearizabilityChecker(), h);
        assertThat(v.status()).isEqualTo(Status.INVALID);
        assertThat(v.offending()).anyMatch(e -> e.op().equals("read") && Long.valueOf(7).equals(e.value()));
    }

    @Test
    void linearizabilityCatchesALostFencedWrite() {
        // w0's write of 1 was acknowledged as accepted, and a later read with a higher token still sees 0
        Histories h = Histories.of(N, "mutex")
                .read("w0", N, 10, 0, 2, 0L, 0)
                .write("w0", N, 10, 1, 4, 6, true, 1)
                .read("w1", N, 11, 10, 12, 0L, 2);
        assertThat(check(new LinearizabilityChecker(), h).status()).isEqualTo(Status.INVALID);
    }

    @Test
    void linearizabilityCatchesAFencedWriteAcceptedWithAStaleToken() {
        Histories h = Histories.of(N, "mutex")
                .read("w1", N, 11, 0, 2, 0L, 0)
                .write("w0", N, 10, 1, 4, 6, true, 1);
        assertThat(check(new LinearizabilityChecker(), h).status()).isEqualTo(Status.INVALID);
    }

    @Test
    void linearizabilityOrdersConcurrentOperationsEitherWay() {
        // the read overlaps the write: it may see the old or the new value
        Histories old = Histories.of(N, "mutex").write("w0", N, 10, 1, 0, 10, true, 1).read("w1", N, 10, 2, 8, 0L, 0);
        Histories fresh = Histories.of(N, "mutex").write("w0", N, 10, 1, 0, 10, true, 0).read("w1", N, 10, 2, 8, 1L, 1);
        assertThat(check(new LinearizabilityChecker(), old).status()).isEqualTo(Status.VALID);
        assertThat(check(new LinearizabilityChecker(), fresh).status()).isEqualTo(Status.VALID);
    }

    @Test
    void aWriteWithAnUnknownOutcomeMayOrMayNotHaveTakenEffect() {
        Histories tookEffect = Histories.of(N, "mutex").writeUnknown("w0", N, 10, 1, 0, 100).read("w1", N, 11, 200, 210, 1L, 1);
        Histories didNot = Histories.of(N, "mutex").writeUnknown("w0", N, 10, 1, 0, 100).read("w1", N, 11, 200, 210, 0L, 0);
        Histories neither = Histories.of(N, "mutex").writeUnknown("w0", N, 10, 1, 0, 100).read("w1", N, 11, 200, 210, 5L, 0);
        assertThat(check(new LinearizabilityChecker(), tookEffect).status()).isEqualTo(Status.VALID);
        assertThat(check(new LinearizabilityChecker(), didNot).status()).isEqualTo(Status.VALID);
        assertThat(check(new LinearizabilityChecker(), neither).status()).isEqualTo(Status.INVALID);
    }

    @Test
    void aReaderIsFencedOnlyByTheLastWriter() {
        Histories h = Histories.of(N, "rwlock")
                .acquire("w0", N, 5, "w", 0, 1, 1_000).write("w0", N, 5, 1, 2, 3, true, 0).release("w0", N, 5, 4, 1_000)
                .acquire("w1", N, 7, "r", 5, 6, 1_000).read("w1", N, 7, 7, 8, 1L, 1)
                .acquire("w2", N, 6, "r", 5, 9, 1_000).read("w2", N, 6, 10, 11, 1L, 2);
        assertThat(check(new LinearizabilityChecker(), h).status()).isEqualTo(Status.VALID);
    }

    @Test
    void aSearchPastItsBoundIsUnknownNotAHang() {
        Histories h = Histories.of(N, "mutex");
        for (int i = 0; i < 40; i++) {
            h.writeUnknown("w" + i, N, 10, i + 1, i, 10_000);
        }
        for (int i = 0; i < 20; i++) {
            h.write("v" + i, N, 10, 100 + i, 50 + i, 20_000, true, i);
        }
        h.read("r", N, 10, 30_000, 30_001, 999L, 100);
        CheckVerdict v = check(new LinearizabilityChecker(1_000), h);
        assertThat(v.status()).isEqualTo(Status.UNKNOWN);
    }

    @Test
    void theVerdictsOfAllCheckersOnAGoodHistoryAreValid() {
        assertThat(HistoryChecker.all()).extracting(HistoryChecker::name)
                .containsExactly("mutual-exclusion", "token-order", "permit-limit", "read-write", "fifo", "linearizability");
        assertThat(List.of(Status.values())).hasSize(3);
    }
}
