package io.reactivelocks.fencing;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockException;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The refusal of a fenced write carries what was written, the token offered and, when read, the fence. */
class StaleTokenExceptionTest {

    @Test
    void carriesTheResourceTheTokenAndTheFence() {
        StaleTokenException e = new StaleTokenException("accounts[id=42]", 7, OptionalLong.of(9));
        assertThat(e).isInstanceOf(LockException.class).hasMessageContaining("accounts[id=42]")
                .hasMessageContaining("token 7").hasMessageContaining("fence 9");
        assertThat(e.resource()).isEqualTo("accounts[id=42]");
        assertThat(e.token()).isEqualTo(7);
        assertThat(e.fence()).hasValue(9);
        assertThat(e.lockName()).isNull();
        assertThat(new StaleTokenException("k", 7, OptionalLong.empty()).fence()).isEmpty();
    }
}
