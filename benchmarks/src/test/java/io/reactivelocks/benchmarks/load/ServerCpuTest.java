package io.reactivelocks.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServerCpuTest {

    @Test
    void readsUserAndSystemTicksAfterACommandWithSpacesAndParentheses() {
        String stat = "1234 (postgres: a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 30 5 7 20 0 20 0 12345 0 0";
        assertThat(ServerCpu.parse(stat, false)).isEqualTo(280);
        assertThat(ServerCpu.parse(stat, true)).as("with the exited children's time").isEqualTo(292);
    }

    @Test
    void aProcessThatWorkedHasCpuTimeAndNoProcessHasNone() {
        // this JVM loaded and compiled the test framework: far more than one 10 ms tick
        assertThat(ServerCpu.nanos(ProcessHandle.current().pid())).as("this JVM's CPU time").isPositive();
        assertThat(ServerCpu.nanos(-1)).isEqualTo(-1);
        assertThat(ServerCpu.nanos(Long.MAX_VALUE)).as("no such process").isEqualTo(-1);
    }
}
