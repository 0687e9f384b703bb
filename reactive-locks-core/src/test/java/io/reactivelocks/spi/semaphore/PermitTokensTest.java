package io.reactivelocks.spi.semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PermitTokensTest {

    @Test
    void tokensOfOneUnitAreDistinctAndBelowEveryLaterUnit() {
        assertThat(PermitTokens.token(7, 0)).isEqualTo(7 * 65_536L);
        assertThat(PermitTokens.token(7, PermitTokens.MAX_COUNT - 1)).isLessThan(PermitTokens.token(8, 0));
        assertThatThrownBy(() -> PermitTokens.token(Long.MAX_VALUE / 1000, 0)).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void valuesReadBackAndMalformedOnesHoldNothing() {
        assertThat(PermitTokens.permitsOf(PermitTokens.value(3, 2))).isEqualTo(3);
        assertThat(PermitTokens.indexOf(PermitTokens.value(3, 2))).isEqualTo(2);
        assertThat(PermitTokens.permitsOf("5")).isEqualTo(5);
        assertThat(PermitTokens.indexOf("5")).isZero();
        assertThat(PermitTokens.permitsOf("x:1")).isZero();
        assertThat(PermitTokens.indexOf("2:y")).isZero();
    }

    @Test
    void tooManyNamesTheArgumentTheStoreAndTheBound() {
        assertThat(PermitTokens.tooMany(70_000, "etcd", "revision"))
                .hasMessageContaining("count").hasMessageContaining("etcd").hasMessageContaining("65535").hasMessageContaining("70000");
    }
}
