package io.reactivelocks.r2dbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A dialect's SQL resources, read once, with their {@code ${placeholders}} filled in — only ever with
 * checked, quoted identifiers or lists of {@code ?}; data is always bound. Not API: the dialect
 * packages' code.
 */
public final class SqlTemplates {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([a-z_]+)}");

    private final Class<?> anchor;
    private final Map<String, String> templates;

    private SqlTemplates(Class<?> anchor, Map<String, String> templates) {
        this.anchor = anchor;
        this.templates = templates;
    }

    /**
     * Reads every script now (when the dialect's class initializes, never on an event loop later).
     *
     * @param anchor    the class the resources lie next to
     * @param resources their file names
     * @return the templates
     * @throws IllegalStateException when a resource is missing
     */
    public static SqlTemplates load(Class<?> anchor, String... resources) {
        Map<String, String> all = new HashMap<>();
        for (String r : resources) {
            try (InputStream in = anchor.getResourceAsStream(r)) {
                if (in == null) {
                    throw new IllegalStateException("missing resource " + r + " next to " + anchor.getName());
                }
                all.put(r, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + r, e);
            }
        }
        return new SqlTemplates(anchor, Map.copyOf(all));
    }

    /**
     * @param resource     a file name given to {@link #load}
     * @param values       placeholder values
     * @param keepComments {@code false} to drop blank lines and whole-line {@code --} comments (a driver
     *                     may count a {@code ?} in a comment as a parameter), {@code true} to keep the text
     * @return the SQL text, trimmed
     * @throws IllegalStateException when the resource was not loaded or a placeholder has no value
     */
    public String render(String resource, Map<String, String> values, boolean keepComments) {
        String text = templates.get(resource);
        if (text == null) {
            throw new IllegalStateException("unknown script " + resource + " of " + anchor.getSimpleName());
        }
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder(text.length());
        while (m.find()) {
            String v = values.get(m.group(1));
            if (v == null) {
                throw new IllegalStateException("no value for ${" + m.group(1) + "} in " + resource);
            }
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        if (keepComments) {
            return out.toString().trim();
        }
        StringBuilder sql = new StringBuilder(out.length());
        for (String line : out.toString().split("\n")) {
            if (!line.isBlank() && !line.stripLeading().startsWith("--")) {
                sql.append(line).append('\n');
            }
        }
        return sql.toString().trim();
    }
}
