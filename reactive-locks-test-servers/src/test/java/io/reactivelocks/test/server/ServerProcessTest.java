package io.reactivelocks.test.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ServerProcessTest {

    @Test
    void aServerThatExitsFailsTheStartWithItsLogTail() {
        assertThatThrownBy(() -> ServerProcess.builder("broken")
                .command(layout -> List.of("/bin/sh", "-c", "echo boom on port " + layout.port() + "; exit 3"))
                .start())
                .isInstanceOf(ServerStartException.class)
                .hasMessageContaining("exited with code 3")
                .hasMessageContaining("boom on port")
                .hasMessageContaining("command: /bin/sh");
    }

    @Test
    void aServerThatNeverGetsReadyFailsWithinTheStartTimeoutAndIsKilled() {
        long started = System.nanoTime();
        assertThatThrownBy(() -> ServerProcess.builder("mute")
                .command(layout -> List.of("/bin/sh", "-c", "echo waiting forever; exec tail -f /dev/null"))
                .startTimeout(Duration.ofSeconds(1))
                .start())
                .isInstanceOf(ServerStartException.class)
                .hasMessageContaining("was not ready within PT1S")
                .hasMessageContaining("waiting forever");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void prepareAndAfterFirstStartRunOnceAndFaultMethodsWork() throws Exception {
        int[] prepared = {0};
        int[] initialized = {0};
        ServerProcess p = ServerProcess.builder("generic")
                .extraPorts(2)
                .prepare(layout -> prepared[0]++)
                .afterFirstStart(layout -> initialized[0]++)
                .command(layout -> List.of("/bin/sh", "-c", "echo started; exec tail -f /dev/null"))
                .readiness(layout -> true)
                .start();
        Path dir = p.directory();
        try (p) {
            assertThat(p.layout().extraPorts()).hasSize(2).doesNotContain(p.port());
            assertThat(p.isAlive()).isTrue();
            p.pause();
            assertThat(p.isPaused()).isTrue();
            assertThat(processState(p.pid())).isEqualTo('T');
            p.resume();
            // SIGCONT is delivered asynchronously
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(processState(p.pid())).isIn('S', 'R'));
            long pid = p.pid();
            p.kill();
            assertThat(p.isAlive()).isFalse();
            assertThatThrownBy(p::pause).isInstanceOf(IllegalStateException.class).hasMessageContaining("restart()");
            p.restart();
            assertThat(p.pid()).isNotEqualTo(pid);
            assertThat(prepared[0]).isEqualTo(1);
            assertThat(initialized[0]).isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(p.logTail(10)).contains("started"));
        }
        assertThat(dir).doesNotExist();
        assertThatThrownBy(p::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void childProcessesDieWhenTheJvmExits() throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process jvm = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"),
                ShutdownHookMain.class.getName()).redirectErrorStream(true).start();
        long serverPid;
        Path dir;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertThat(line).as("output of the child JVM").startsWith("pid ");
            String[] parts = line.split(" ");
            serverPid = Long.parseLong(parts[1]);
            dir = Path.of(parts[2]);
            out.transferTo(java.io.Writer.nullWriter());
        }
        assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> ProcessHandle.of(serverPid).map(ProcessHandle::isAlive).orElse(false), alive -> !alive);
        assertThat(dir).doesNotExist();
    }

    private static char processState(long pid) throws Exception {
        String stat = java.nio.file.Files.readString(Path.of("/proc/" + pid + "/stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }
}
