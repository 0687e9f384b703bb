package io.reactivelocks.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DemoTest {

    @Test
    void theFrozenInstancesLateWriteIsRejectedAndNoUpdateIsLost() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Demo.Summary s = Demo.run(new Demo.Config(Duration.ofSeconds(4), 4, 2, Duration.ofMillis(400),
                Duration.ofMillis(1200), true), new PrintStream(buf, true, StandardCharsets.UTF_8));
        String out = buf.toString(StandardCharsets.UTF_8);
        assertThat(s.acquisitions()).isGreaterThan(50);
        assertThat(s.handoffs()).isPositive();
        assertThat(s.staleWritesRejected()).as(out).isGreaterThanOrEqualTo(1);
        assertThat(s.staleWritesAccepted()).isZero();
        assertThat(s.lostUpdates()).as(out).isZero();
        assertThat(s.leasesLost()).as("the frozen instance lost its lease").isGreaterThanOrEqualTo(1);
        assertThat(out).contains("rejected as stale").contains("summary: acquisitions");
    }
}
