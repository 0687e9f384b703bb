package io.reactivelocks.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/BENCHMARKS.md ends with the analysis a full run copies from {@code analysis.md}: a finding
 * written into the docs alone would be lost at the next full run, and one written into
 * {@code analysis.md} alone would not be read until then. Edit both, or run the benchmarks.
 */
class AnalysisInStepTest {

    @Test
    void theDocsEndWithTheAnalysisAFullRunWrites() throws Exception {
        String analysis;
        try (InputStream in = Report.class.getResourceAsStream("/io/reactivelocks/benchmarks/analysis.md")) {
            assertThat(in).as("analysis.md on the class path").isNotNull();
            analysis = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path docs = Path.of("..", "docs", "BENCHMARKS.md");
        assertThat(docs).as("docs/BENCHMARKS.md beside the benchmarks module").exists();
        String md = Files.readString(docs, StandardCharsets.UTF_8);
        assertThat(md.strip()).as("docs/BENCHMARKS.md ends with benchmarks/src/main/resources/io/reactivelocks/benchmarks/analysis.md")
                .endsWith(analysis.strip());
    }
}
