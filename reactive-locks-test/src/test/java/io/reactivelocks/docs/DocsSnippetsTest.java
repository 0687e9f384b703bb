package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation's code samples are the tested code. Every fenced {@code java} or {@code kotlin} block
 * of the Markdown pages (README.md, CHANGELOG.md, docs/**, every module's README.md) must be preceded by a
 * marker {@code <!-- snippet: path/to/File.java#tag -->} (the path from the repository root), and its text
 * must equal, whitespace-normalised, the region of that file between {@code // tag::tag[]} and
 * {@code // end::tag[]} — a region of a test that compiles and runs the sample. A block without a marker may
 * only be shell, XML, SQL or configuration. Each tagged region of a file a page points at must be shown
 * somewhere (no sample kept only in a test), and each relative link of a page must lead to a file.
 */
class DocsSnippetsTest {

    private static final Pattern FENCE = Pattern.compile("^\\s{0,12}(```+|~~~+)\\s*([A-Za-z0-9_+-]*)\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*snippet:\\s*([^#\\s]+)#([A-Za-z0-9_.-]+)\\s*-->\\s*$");
    private static final Pattern TAG = Pattern.compile("(?:tag|end)::([A-Za-z0-9_.-]+)\\[\\]");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    /** What an unmarked block may hold: commands, build files, SQL, configuration and output, never code to compile. */
    private static final Set<String> UNMARKED = Set.of("bash", "sh", "shell", "console", "xml", "sql", "properties",
            "yaml", "yml", "json", "text", "toml", "ini");
    private static final Set<String> CODE = Set.of("java", "kotlin", "kt");

    private final Path root = repositoryRoot();

    /** A fenced block of a page. */
    private record Block(String where, String language, String text, String marker) {
    }

    @Test
    void everyJavaAndKotlinBlockIsTheTaggedRegionOfATestedFile() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Block b : blocks()) {
            if (b.marker() == null) {
                if (CODE.contains(b.language())) {
                    problems.add(b.where() + ": a ```" + b.language() + " block without a <!-- snippet: file#tag --> marker");
                } else if (!UNMARKED.contains(b.language())) {
                    problems.add(b.where() + ": a block without a marker must name its language, one of " + new TreeSet<>(UNMARKED)
                            + " (code must come from a tested file), was '" + b.language() + "'");
                }
                continue;
            }
            if (!CODE.contains(b.language())) {
                problems.add(b.where() + ": a snippet marker on a ```" + b.language() + " block (java or kotlin expected)");
                continue;
            }
            String[] ref = b.marker().split("#", 2);
            Path file = root.resolve(ref[0]);
            if (!Files.isRegularFile(file)) {
                problems.add(b.where() + ": snippet file " + ref[0] + " does not exist");
                continue;
            }
            Map<String, String> regions;
            try {
                regions = regions(file);
            } catch (IllegalStateException e) {
                problems.add(b.where() + ": " + e.getMessage());
                continue;
            }
            String region = regions.get(ref[1]);
            if (region == null) {
                problems.add(b.where() + ": no region tag::" + ref[1] + "[] in " + ref[0] + " (has " + regions.keySet() + ")");
                continue;
            }
            if (!normalise(region).equals(normalise(b.text()))) {
                problems.add(b.where() + ": differs from " + b.marker() + "\n--- page:\n" + b.text() + "\n--- " + ref[0] + ":\n"
                        + dedent(region));
            }
            checked++;
        }
        assertThat(problems).as("documentation code blocks").isEmpty();
        assertThat(checked).as("checked samples").isGreaterThan(50);
    }

    @Test
    void everyRegionOfASampleFileIsShownOnAPage() {
        Map<String, Set<String>> shown = new HashMap<>();
        for (Block b : blocks()) {
            if (b.marker() != null) {
                String[] ref = b.marker().split("#", 2);
                shown.computeIfAbsent(ref[0], k -> new TreeSet<>()).add(ref[1]);
            }
        }
        List<String> unshown = new ArrayList<>();
        shown.forEach((file, tags) -> {
            Path p = root.resolve(file);
            if (Files.isRegularFile(p)) {
                for (String tag : regions(p).keySet()) {
                    if (!tags.contains(tag)) {
                        unshown.add(file + "#" + tag);
                    }
                }
            }
        });
        assertThat(unshown).as("tagged regions no page shows (remove the tags or show the sample)").isEmpty();
    }

    @Test
    void everyRelativeLinkLeadsToAFile() {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            List<String> lines = read(page);
            boolean inFence = false;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (FENCE.matcher(line).matches()) {
                    inFence = !inFence;
                    continue;
                }
                if (inFence) {
                    continue;
                }
                Matcher m = LINK.matcher(line);
                while (m.find()) {
                    String target = m.group(1);
                    if (target.startsWith("#") || target.matches("^[a-z][a-z0-9+.-]*:.*")) {
                        continue; // an anchor on the page, or http:, https:, mailto:
                    }
                    String path = target.replaceAll("#.*$", "");
                    if (!Files.exists(page.getParent().resolve(path).normalize())) {
                        broken.add(root.relativize(page) + ":" + (i + 1) + ": " + target);
                    }
                }
            }
        }
        assertThat(broken).as("relative links to files that do not exist").isEmpty();
    }

    @Test
    void theReadmeStaysShort() {
        assertThat(read(root.resolve("README.md"))).as("README.md lines").hasSizeLessThanOrEqualTo(200);
        assertThat(read(root.resolve("CHANGELOG.md"))).as("CHANGELOG.md lines").hasSizeLessThanOrEqualTo(120);
    }

    /** @return every fenced block of every page, with the snippet marker right before it (blank lines allowed) */
    private List<Block> blocks() {
        List<Block> out = new ArrayList<>();
        for (Path page : pages()) {
            List<String> lines = read(page);
            for (int i = 0; i < lines.size(); i++) {
                Matcher open = FENCE.matcher(lines.get(i));
                if (!open.matches()) {
                    continue;
                }
                String fence = open.group(1);
                String language = open.group(2).toLowerCase(java.util.Locale.ROOT);
                int j = i + 1;
                StringBuilder text = new StringBuilder();
                while (j < lines.size() && !lines.get(j).strip().equals(fence)) {
                    text.append(lines.get(j)).append('\n');
                    j++;
                }
                if (j == lines.size()) {
                    throw new AssertionError(root.relativize(page) + ":" + (i + 1) + ": unclosed code block");
                }
                String marker = null;
                int k = i - 1;
                while (k >= 0 && lines.get(k).isBlank()) {
                    k--;
                }
                if (k >= 0) {
                    Matcher m = MARKER.matcher(lines.get(k));
                    if (m.matches()) {
                        marker = m.group(1) + "#" + m.group(2);
                    }
                }
                out.add(new Block(root.relativize(page) + ":" + (i + 1), language, text.toString(), marker));
                i = j;
            }
        }
        return out;
    }

    /** @return the pages: README.md, CHANGELOG.md, docs/**.md and each module's README.md */
    private List<Path> pages() {
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        pages.add(root.resolve("CHANGELOG.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"));
             Stream<Path> modules = Files.walk(root, 3)) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
            modules.filter(p -> p.getFileName().toString().equals("README.md"))
                    .filter(p -> !p.getParent().equals(root))
                    .filter(p -> root.relativize(p).toString().matches("(reactive-locks-[^/]+|benchmarks|examples/[^/]+)/README\\.md"))
                    .sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /**
     * @return the tagged regions of a sample file, each the lines between {@code tag::name[]} and
     *         {@code end::name[]} without the marker lines of nested regions
     */
    private static Map<String, String> regions(Path file) {
        List<String> lines = read(file);
        Map<String, String> out = new LinkedHashMap<>();
        Map<String, StringBuilder> open = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = TAG.matcher(line);
            if (m.find()) {
                String name = m.group(1);
                if (line.contains("tag::" + name + "[]")) {
                    if (open.containsKey(name) || out.containsKey(name)) {
                        throw new IllegalStateException(file.getFileName() + ":" + (i + 1) + ": region " + name + " opened twice");
                    }
                    open.put(name, new StringBuilder());
                } else {
                    StringBuilder b = open.remove(name);
                    if (b == null) {
                        throw new IllegalStateException(file.getFileName() + ":" + (i + 1) + ": end::" + name + "[] without its tag");
                    }
                    out.put(name, b.toString());
                }
                continue;
            }
            for (StringBuilder b : open.values()) {
                b.append(line).append('\n');
            }
        }
        if (!open.isEmpty()) {
            throw new IllegalStateException(file.getFileName() + ": regions never ended: " + open.keySet());
        }
        return out;
    }

    private static String normalise(String code) {
        return code.strip().replaceAll("\\s+", " ");
    }

    /** @return the region with its common indentation removed, as it would be pasted into a page */
    private static String dedent(String region) {
        List<String> lines = region.lines().collect(Collectors.toList());
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).collect(Collectors.joining("\n"));
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the repository root: the nearest directory up from the working directory with mvnw and docs/ */
    static Path repositoryRoot() {
        Path dir = Paths.get("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("docs")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no repository root (mvnw and docs/) above " + Paths.get("").toAbsolutePath());
        }
        return dir;
    }
}
