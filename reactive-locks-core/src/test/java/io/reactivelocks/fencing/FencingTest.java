package io.reactivelocks.fencing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The one fencing rule. */
class FencingTest {

    @Test
    void aLowerTokenIsRefusedAnEqualOrHigherOneAdmitted() {
        assertThat(Fencing.admits(10, 9)).isFalse();
        assertThat(Fencing.admits(10, 10)).isTrue();
        assertThat(Fencing.admits(10, 11)).isTrue();
        assertThat(Fencing.admits(Long.MAX_VALUE, Long.MIN_VALUE)).isFalse();
    }
}
