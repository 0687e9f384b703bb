package io.reactivelocks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class LockNamesTest {

    private static final List<String> NAMES = List.of("a", "a/b", "/", "..", "*", "\u0000", "ünï-锁-🔒", " ", "\n",
            "\uD800", "\uDC00", "\uDC00\uD800", "\uD800x", "?", "\uFFFD", "\uFFFF", "\uDBFF\uDFFF", "é".repeat(512));

    @Test
    void checkAcceptsNonEmptyNamesUpTo1024Utf8Bytes() {
        assertThat(LockNames.check("x".repeat(1024))).hasSize(1024);
        assertThat(LockNames.check("é".repeat(512))).hasSize(512);
        assertThat(LockNames.check("\uD800".repeat(341))).hasSize(341); // a lone surrogate counts 3 bytes
        assertThatThrownBy(() -> LockNames.check("\uD800".repeat(342))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must be at most 1024 UTF-8 bytes, was 1026");
        assertThatThrownBy(() -> LockNames.check("x".repeat(1025))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> LockNames.check("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must not be empty");
        assertThatThrownBy(() -> LockNames.check(null)).isInstanceOf(NullPointerException.class).hasMessage("name");
        assertThatThrownBy(() -> LockNames.check("", "queue")).hasMessage("queue must not be empty");
        assertThatThrownBy(() -> LockNames.check(null, "taskId")).hasMessage("taskId");
    }

    @Test
    void utf8IsPlainUtf8ForWellFormedStringsAndKeepsLoneSurrogatesApart() {
        for (String s : List.of("plain", "ünï-锁-🔒", "\u0000", "\uFFFF", "\uD83D\uDD12")) {
            assertThat(LockNames.utf8(s)).isEqualTo(s.getBytes(StandardCharsets.UTF_8));
        }
        assertThat(LockNames.utf8("\uD800")).containsExactly(0xED, 0xA0, 0x80);
        assertThat(LockNames.utf8("\uD800x")).isNotEqualTo(LockNames.utf8("?x"));
        for (String s : NAMES) {
            assertThat(LockNames.utf8(s)).as("bytes of %s", s).hasSize(LockNames.utf8Length(s));
            assertThat(LockNames.fromUtf8(LockNames.utf8(s))).as("round trip of %s", s).isEqualTo(s);
        }
        assertThatThrownBy(() -> LockNames.fromUtf8(new byte[] {(byte) 0xE2, (byte) 0x82}))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void base64urlIsOneSafeSegmentPerNameAndDecodesBack() {
        for (String s : NAMES) {
            String segment = LockNames.base64url(s);
            assertThat(segment).as("segment of %s", s).matches("[A-Za-z0-9_-]+");
            assertThat(LockNames.fromBase64url(segment)).isEqualTo(s);
        }
        assertThat(LockNames.base64url("\uD800")).isNotEqualTo(LockNames.base64url("?"))
                .isNotEqualTo(LockNames.base64url("\uDC00"));
        assertThat(LockNames.base64url("x".repeat(1024))).hasSize(1366);
        assertThatThrownBy(() -> LockNames.fromBase64url("not base64!")).isInstanceOf(IllegalArgumentException.class);
    }
}
