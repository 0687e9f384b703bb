package io.reactivelocks.r2dbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The stored form both SQL dialects share: a round trip and no collision, in the text form and the binary form. */
class StoredFormTest {

    private static final List<String> TRICKY = List.of("a\u0000", "a\\0", "a\\\\0", "a\\", "a\\\\", "\uD800", "\\uD800",
            "\uDC00\uD800", "\uD800\uDC00", "\\u0000", "\u0000\u0000", "\\0\\0", "a", "order:42 ünï 🔒 '\"%_*");

    @Test
    void bothFormsRoundTripEveryNameAndNeverCollide() {
        for (StoredForm form : List.of(StoredForm.TEXT, StoredForm.BINARY)) {
            Set<String> stored = new HashSet<>();
            for (String n : TRICKY) {
                String e = form.encode(n);
                assertThat(form.decode(e)).as("round trip of %s", n).isEqualTo(n);
                assertThat(loneSurrogate(e)).as("no lone surrogate in %s", e).isFalse();
                stored.add(e);
            }
            assertThat(stored).as("injective").hasSize(TRICKY.size());
        }
    }

    @Test
    void nulIsEscapedInTextAndKeptInBinaryAndOtherNamesAreUnchanged() {
        assertThat(StoredForm.TEXT.encode("a\u0000b")).isEqualTo("a\\0b");
        assertThat(StoredForm.BINARY.encode("a\u0000b")).isEqualTo("a\u0000b");
        String plain = "order:42 🔒";
        assertThat(StoredForm.TEXT.encode(plain)).isSameAs(plain);
        assertThat(StoredForm.BINARY.encode(plain)).isSameAs(plain);
        assertThat(StoredForm.BINARY.encode("a\\b")).isEqualTo("a\\\\b");
    }

    private static boolean loneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
