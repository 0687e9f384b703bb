package io.reactivelocks.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The CLI as a separate JVM on the test class path, its stdout and stderr in files. */
final class CliProcess {

    private static final AtomicInteger COUNT = new AtomicInteger();
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    /** Absolute: the processes run in a directory of their own. */
    private static final Path CDS = Path.of("target", "cli-cds").toAbsolutePath();
    /** The test class path with each directory packed as a jar: a class-data archive cannot be written otherwise. */
    private static final String CLASS_PATH = withoutDirectories(System.getProperty("java.class.path"));
    /** Class-data archive options once {@link #warmUp} wrote one: a CLI JVM starts in about half the CPU time. */
    private static volatile List<String> archive = List.of();

    private static String withoutDirectories(String classPath) {
        List<String> out = new ArrayList<>();
        int n = 0;
        try {
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                Path dir = Path.of(entry).toAbsolutePath();
                if (!Files.isDirectory(dir)) {
                    out.add(dir.toString());
                    continue;
                }
                Files.createDirectories(CDS);
                Path jar = CDS.resolve("classes-" + (n++) + ".jar");
                try (java.util.jar.JarOutputStream zip = new java.util.jar.JarOutputStream(Files.newOutputStream(jar));
                     java.util.stream.Stream<Path> files = Files.walk(dir)) {
                    for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                        zip.putNextEntry(new java.util.jar.JarEntry(dir.relativize(f).toString().replace('\\', '/')));
                        Files.copy(f, zip);
                        zip.closeEntry();
                    }
                }
                out.add(jar.toString());
            }
            return String.join(java.io.File.pathSeparator, out);
        } catch (IOException | RuntimeException e) {
            return classPath;
        }
    }

    /**
     * Writes the class-data archive of the CLI's JVMs: one {@code list} against {@code storeUrl}, which
     * loads the driver's classes, with {@code -XX:ArchiveClassesAtExit}. Later processes read it; without
     * it (a JDK that cannot write one) they start as before.
     *
     * @param dir      where the warm-up's output goes
     * @param storeUrl a store that answers
     */
    static void warmUp(Path dir, String storeUrl) throws InterruptedException, IOException {
        if (CLASS_PATH.equals(System.getProperty("java.class.path"))) {
            return; // a directory could not be packed: no archive
        }
        Path file = CDS.resolve("cli.jsa");
        Files.deleteIfExists(file);
        Process p = new ProcessBuilder(JAVA, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xlog:disable", "-Xlog:all=warning:stderr",
                "-XX:ArchiveClassesAtExit=" + file, "-cp", CLASS_PATH, Main.class.getName(), "--store", storeUrl, "list", "warm-up")
                .directory(dir.toFile()).redirectOutput(dir.resolve("warm-up.out").toFile()).redirectError(dir.resolve("warm-up.err").toFile())
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return;
        }
        if (p.exitValue() == 0 && Files.isRegularFile(file)) {
            archive = List.of("-Xlog:disable", "-Xlog:all=warning:stderr", "-XX:SharedArchiveFile=" + file);
        }
    }

    final Process process;
    final Path out;
    final Path err;
    final List<String> args;

    private CliProcess(Process process, Path out, Path err, List<String> args) {
        this.process = process;
        this.out = out;
        this.err = err;
        this.args = args;
    }

    /**
     * @param dir  where the output files go
     * @param env  environment changes (a null value removes the variable)
     * @param args the CLI's arguments
     * @return the started process
     */
    static CliProcess start(Path dir, Map<String, String> env, String... args) {
        int n = COUNT.incrementAndGet();
        Path out = dir.resolve("cli-" + n + ".out");
        Path err = dir.resolve("cli-" + n + ".err");
        List<String> cmd = new ArrayList<>(List.of(JAVA, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"));
        cmd.addAll(archive);
        cmd.addAll(List.of("-cp", CLASS_PATH, Main.class.getName()));
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(nullFile()));
        pb.environment().remove("REACTIVE_LOCKS_STORE");
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        try {
            return new CliProcess(pb.start(), out, err, List.of(args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static java.io.File nullFile() {
        return new java.io.File("/dev/null");
    }

    String stdout() {
        return read(out);
    }

    String stderr() {
        return read(err);
    }

    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param timeout how long it may take
     * @return the exit code
     */
    int exitCode(Duration timeout) {
        try {
            boolean done = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(done).as("%s ended within %s; stdout: %s; stderr: %s", args, timeout, stdout(), stderr()).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return process.exitValue();
    }

    /** Kills the CLI and whatever it started. */
    void kill() {
        List<ProcessHandle> family = process.descendants().toList();
        process.destroyForcibly();
        family.forEach(ProcessHandle::destroyForcibly);
    }

    @Override
    public String toString() {
        return args + " stdout: " + stdout() + " stderr: " + stderr();
    }
}
