package io.reactivelocks.test.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Small bounded helpers around external commands: run one, send signals, find binaries. */
final class Commands {

    /** The outcome of a finished command. */
    record Result(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    private Commands() {
    }

    /**
     * Runs a command to completion, bounded; output (stdout and stderr) goes to {@code log} when
     * given, else it is captured in the result. A command still running at the timeout is killed.
     */
    static Result run(List<String> command, Path workDir, Path log, Duration timeout) {
        try {
            Path out = log != null ? log : Files.createTempFile("reactive-locks-cmd-", ".log");
            long before = Files.exists(out) ? Files.size(out) : 0;
            if (log != null) {
                Files.writeString(log, "---- running: " + String.join(" ", command) + System.lineSeparator(),
                        StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                before = Files.size(out);
            }
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(Redirect.appendTo(out.toFile()))
                    .redirectInput(Redirect.from(new java.io.File("/dev/null")));
            if (workDir != null) {
                pb.directory(workDir.toFile());
            }
            Process p = pb.start();
            boolean done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
            }
            String output = readFrom(out, before);
            if (log == null) {
                Files.deleteIfExists(out);
            }
            return new Result(done ? p.exitValue() : -1, done ? output : output + "\n(killed after " + timeout + ")");
        } catch (IOException e) {
            return new Result(-1, "cannot run " + String.join(" ", command) + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted while running " + String.join(" ", command));
        }
    }

    /** Sends a signal (for example {@code STOP}) to processes with the {@code kill} command. */
    static Result signal(String signal, Collection<Long> pids) {
        if (pids.isEmpty()) {
            return new Result(0, "");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(killCommand());
        cmd.add("-" + signal);
        pids.forEach(p -> cmd.add(Long.toString(p)));
        return run(cmd, null, null, Duration.ofSeconds(10));
    }

    private static String killCommand() {
        for (String c : List.of("/bin/kill", "/usr/bin/kill")) {
            if (Files.isExecutable(Path.of(c))) {
                return c;
            }
        }
        return "kill";
    }

    /** Finds an executable by name on the PATH, then in the given fallback locations. */
    static Optional<Path> findExecutable(String name, String... fallbacks) {
        String path = System.getenv("PATH");
        Stream<Path> onPath = path == null ? Stream.empty()
                : Stream.of(path.split(java.io.File.pathSeparator)).filter(s -> !s.isEmpty()).map(d -> Path.of(d, name));
        return Stream.concat(onPath, Stream.of(fallbacks).map(Path::of))
                .filter(Files::isRegularFile).filter(Files::isExecutable).findFirst();
    }

    /** Reads a file from a byte offset as UTF-8, or an empty string when it cannot be read. */
    static String readFrom(Path file, long offset) {
        try (var ch = Files.newByteChannel(file)) {
            long size = ch.size();
            if (offset >= size) {
                return "";
            }
            ch.position(offset);
            try (InputStream in = java.nio.channels.Channels.newInputStream(ch)) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return "";
        }
    }

    /** The last lines of a file (at most 16 KiB are read), or a note when it cannot be read. */
    static String tail(Path file, int maxLines) {
        try {
            if (!Files.exists(file)) {
                return "(no log at " + file + ")";
            }
            long size = Files.size(file);
            String text = readFrom(file, Math.max(0, size - 16 * 1024));
            String[] lines = text.split("\\R");
            int from = Math.max(0, lines.length - maxLines);
            return String.join(System.lineSeparator(), java.util.Arrays.asList(lines).subList(from, lines.length));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    /** Deletes a directory tree, ignoring what cannot be deleted. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort: a server may still be writing while the JVM shuts down
                }
            });
        } catch (IOException | UncheckedIOException ignored) {
            // best effort
        }
    }
}
