package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockBackendException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import reactor.test.util.TestLogger;

/** An outage of the store is one WARN line when it starts and one INFO line when it ends, whatever the number of requests. */
class StoreOutageTest {

    private final TestLogger log = new TestLogger(false);
    private final StoreOutage outage = new StoreOutage("redis", "lock client 7", log);

    private long lines(String level) {
        return Arrays.stream((log.getOutContent() + log.getErrContent()).split("\n")).filter(l -> l.contains(level + "]")).count();
    }

    @Test
    void manyFailedRequestsOfOneOutageLogOneWarnAndItsEndOneInfo() {
        for (int i = 0; i < 100; i++) {
            outage.failed(new LockBackendException("a" + i, "redis did not answer within 2 s", null, true));
        }
        assertThat(outage.down()).isTrue();
        for (int i = 0; i < 10; i++) {
            outage.answered();
        }
        assertThat(outage.down()).isFalse();
        assertThat(lines("WARN")).isOne();
        assertThat(lines("INFO")).isOne();
        assertThat(log.getErrContent() + log.getOutContent()).contains("redis is unreachable (lock client 7)").contains("redis answers again");
        // a second outage is logged again
        outage.failed(new LockBackendException("a", "connection refused", null, true));
        assertThat(lines("WARN")).isEqualTo(2);
    }

    @Test
    void aFailureThatIsNotTransientIsNoOutage() {
        outage.failed(new LockBackendException("a", "NOPERM", null, false));
        outage.failed(new IllegalStateException("a bug"));
        assertThat(outage.down()).isFalse();
        assertThat(log.getErrContent() + log.getOutContent()).isEmpty();
    }

    @Test
    void aRequestOfTheOutageThatFailsAfterTheStoreAnswersAgainStartsNoNewOutage() {
        int during = outage.epoch();
        outage.failed(new LockBackendException("a", "redis did not answer within 1 s", null, true), during);
        // the store answers again: the first answers of the recovery ...
        outage.answered();
        // ... and a request sent during the outage times out a moment later (a loaded machine's timer)
        outage.failed(new LockBackendException("b", "redis did not answer within 1 s", null, true), during);
        outage.answered();
        assertThat(outage.down()).isFalse();
        assertThat(lines("WARN")).isOne();
        assertThat(lines("INFO")).isOne();
        // a request sent after the recovery that fails is a new outage
        outage.failed(new LockBackendException("c", "connection refused", null, true), outage.epoch());
        assertThat(outage.down()).isTrue();
        assertThat(lines("WARN")).isEqualTo(2);
    }
}
