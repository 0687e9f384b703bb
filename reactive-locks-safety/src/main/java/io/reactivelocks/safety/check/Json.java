package io.reactivelocks.safety.check;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Flat JSON objects (string, number, boolean values): what one history line is. */
final class Json {

    private Json() {
    }

    static String write(Map<String, @Nullable Object> fields) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, @Nullable Object> e : fields.entrySet()) {
            Object v = e.getValue();
            if (v == null) {
                continue;
            }
            if (b.length() > 1) {
                b.append(',');
            }
            quote(b, e.getKey());
            b.append(':');
            if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                quote(b, v.toString());
            }
        }
        return b.append('}').toString();
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    /** Parses one flat object: values are String, Long, Double, Boolean or null. */
    static Map<String, @Nullable Object> parse(String line) {
        Map<String, @Nullable Object> m = new LinkedHashMap<>();
        int[] at = {skip(line, 0)};
        expect(line, at, '{');
        if (peek(line, at) == '}') {
            return m;
        }
        while (true) {
            String key = string(line, at);
            expect(line, at, ':');
            m.put(key, value(line, at));
            char c = peek(line, at);
            at[0]++;
            if (c == '}') {
                return m;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected , or } at " + (at[0] - 1) + " in " + line);
            }
        }
    }

    private static int skip(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    private static char peek(String s, int[] at) {
        at[0] = skip(s, at[0]);
        if (at[0] >= s.length()) {
            throw new IllegalArgumentException("unexpected end of " + s);
        }
        return s.charAt(at[0]);
    }

    private static void expect(String s, int[] at, char c) {
        if (peek(s, at) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + at[0] + " in " + s);
        }
        at[0]++;
    }

    private static @Nullable Object value(String s, int[] at) {
        char c = peek(s, at);
        if (c == '"') {
            return string(s, at);
        }
        int start = at[0];
        while (at[0] < s.length() && ",}".indexOf(s.charAt(at[0])) < 0 && !Character.isWhitespace(s.charAt(at[0]))) {
            at[0]++;
        }
        String word = s.substring(start, at[0]);
        return switch (word) {
            case "null" -> null;
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> word.contains(".") || word.contains("e") || word.contains("E") ? (Object) Double.parseDouble(word)
                    : (Object) Long.parseLong(word);
        };
    }

    private static String string(String s, int[] at) {
        expect(s, at, '"');
        StringBuilder b = new StringBuilder();
        while (true) {
            if (at[0] >= s.length()) {
                throw new IllegalArgumentException("unterminated string in " + s);
            }
            char c = s.charAt(at[0]++);
            if (c == '"') {
                return b.toString();
            }
            if (c == '\\') {
                char e = s.charAt(at[0]++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(at[0], at[0] + 4), 16));
                        at[0] += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
    }
}
