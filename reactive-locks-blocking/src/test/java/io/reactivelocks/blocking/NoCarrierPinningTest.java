package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The facade's own bytecode holds no monitor and never calls {@code Object.wait}: on JDK 21 to 23
 * a virtual thread that blocks inside {@code synchronized} (or in {@code Object.wait}) pins its
 * carrier. The JFR check in {@link BlockingLocksTest} runs on this JDK, which no longer pins for
 * monitors (JEP 491), so this check is what keeps the facade safe on the older JDKs.
 */
class NoCarrierPinningTest {

    @Test
    void theFacadeHoldsNoMonitorAndNeverWaitsOnOne() throws Exception {
        Path classes = Path.of(BlockingLocks.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "javap").toString(), "-c", "-p"));
        try (Stream<Path> files = Files.walk(classes.resolve("io/reactivelocks/blocking"))) {
            files.filter(f -> f.toString().endsWith(".class")).map(Path::toString).forEach(command::add);
        }
        Process javap = new ProcessBuilder(command).redirectErrorStream(true).start();
        String bytecode = new String(javap.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(javap.waitFor()).as(bytecode).isZero();
        assertThat(bytecode).contains("class io.reactivelocks.blocking.BlockingLocks", "class io.reactivelocks.blocking.Await",
                "java/util/concurrent/CompletableFuture.get");
        assertThat(bytecode).doesNotContain("monitorenter", " synchronized ", "java/lang/Object.wait");
        System.out.printf("[blocking] %d classes of the facade: no monitorenter, no synchronized method, no Object.wait%n",
                command.size() - 3);
    }
}
