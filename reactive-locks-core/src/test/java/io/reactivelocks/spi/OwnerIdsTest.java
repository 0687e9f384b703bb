package io.reactivelocks.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Base64;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OwnerIdsTest {

    @Test
    void ownerIdsAreBase64urlOf16RandomBytesAndDistinct() {
        Random random = new Random(7);
        byte[] src = new byte[48];
        for (int round = 0; round < 200; round++) {
            random.nextBytes(src);
            byte[] out = new byte[22];
            OwnerIds.encode(src, 16, out);
            byte[] id = java.util.Arrays.copyOfRange(src, 16, 32);
            assertThat(new String(out, java.nio.charset.StandardCharsets.US_ASCII))
                    .isEqualTo(Base64.getUrlEncoder().withoutPadding().encodeToString(id));
        }
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            String id = OwnerIds.next();
            assertThat(id).hasSize(22).matches("[A-Za-z0-9_-]{22}");
            ids.add(id);
        }
        assertThat(ids).hasSize(10_000);
    }
}
