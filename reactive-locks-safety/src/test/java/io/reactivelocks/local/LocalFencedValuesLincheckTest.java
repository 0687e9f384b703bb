package io.reactivelocks.local;

import io.reactivelocks.fencing.FencedValue;
import java.util.HashMap;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Lincheck in model-checking mode against the in-memory fenced values ({@link LocalFencedValues}):
 * writes, reads and deletes of two keys by three threads must be explained by a sequential fenced
 * register per key (a write or delete is accepted only with a token at least the highest accepted
 * for that key; a delete keeps the key's fence). There is no clock: fencing is by token alone.
 *
 * <p>Bounded for the build (5 × 40 scenarios); {@code -Dreactivelocks.modelcheck.long=true} explores 50 × 1000
 * (minutes).
 */
@Param(name = "key", gen = IntGen.class, conf = "1:2")
@Param(name = "token", gen = IntGen.class, conf = "1:4")
@Param(name = "value", gen = IntGen.class, conf = "1:2")
public class LocalFencedValuesLincheckTest {

    private final LocalFencedValues values = new LocalFencedValues();

    /** @return whether the write was accepted */
    @Operation
    public boolean write(@Param(name = "key") int key, @Param(name = "token") int token, @Param(name = "value") int value) {
        return LocalSemaphoreStoreLincheckTest.now(values.write("k" + key, token, "v" + value));
    }

    /** @return the key's value and fence, or {@code "-"} when it has no value */
    @Operation
    public String read(@Param(name = "key") int key) {
        FencedValue v = LocalSemaphoreStoreLincheckTest.now(values.read("k" + key));
        return v == null ? "-" : v.value() + "/" + v.fence();
    }

    /** @return whether the delete was accepted */
    @Operation
    public boolean delete(@Param(name = "key") int key, @Param(name = "token") int token) {
        return LocalSemaphoreStoreLincheckTest.now(values.delete("k" + key, token));
    }

    @Test
    void modelChecking() {
        boolean longMode = Boolean.getBoolean("reactivelocks.modelcheck.long");
        new ModelCheckingOptions()
                .iterations(longMode ? 50 : 5)
                .invocationsPerIteration(longMode ? 1_000 : 40)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(FencedSpec.class)
                .check(LocalFencedValuesLincheckTest.class);
    }

    /** The sequential fenced registers the store must behave like. */
    public static final class FencedSpec {
        private final Map<Integer, Long> fences = new HashMap<>();   // key -> highest accepted token
        private final Map<Integer, String> values = new HashMap<>(); // key -> value, absent when deleted

        private boolean admit(int key, int token) {
            Long fence = fences.get(key);
            if (fence != null && token < fence) {
                return false;
            }
            fences.put(key, (long) token);
            return true;
        }

        /** @see LocalFencedValuesLincheckTest#write */
        public boolean write(int key, int token, int value) {
            if (!admit(key, token)) {
                return false;
            }
            values.put(key, "v" + value);
            return true;
        }

        /** @see LocalFencedValuesLincheckTest#read */
        public String read(int key) {
            String v = values.get(key);
            return v == null ? "-" : v + "/" + fences.get(key);
        }

        /** @see LocalFencedValuesLincheckTest#delete */
        public boolean delete(int key, int token) {
            if (!admit(key, token)) {
                return false;
            }
            values.remove(key);
            return true;
        }
    }
}
