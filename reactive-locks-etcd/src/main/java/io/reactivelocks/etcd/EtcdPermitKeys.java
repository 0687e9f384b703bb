package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.reactivelocks.spi.semaphore.PermitTokens;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The units of {@link EtcdSemaphoreStore}: the k permits of one request are k keys put in one
 * transaction, so they share one create revision, the unit id of {@link PermitTokens}' scheme
 * (etcd's revision is global, strictly increasing and persisted; tokens are exact for revisions
 * below 2^47).
 */
final class EtcdPermitKeys {

    /** The most permits one request may ask for. */
    static final int MAX_COUNT = PermitTokens.MAX_COUNT;

    private EtcdPermitKeys() {
    }

    /**
     * @param count the permits a request asks for
     * @return the error for a request of more than {@link #MAX_COUNT}
     */
    static IllegalArgumentException tooMany(int count) {
        return PermitTokens.tooMany(count, "etcd", "revision");
    }

    /**
     * @param revision a unit's create revision
     * @param index    a permit's index in the unit
     * @return the permit's token
     * @throws ArithmeticException when it does not fit in a {@code long} (a revision of 2^47 or more)
     */
    static long token(long revision, int index) {
        return PermitTokens.token(revision, index);
    }

    /** @return the token of a permit's key */
    static long token(KeyValue kv) {
        return token(kv.getCreateRevision(), indexOf(kv.getValue()));
    }

    /** @return the value of a permit's key: the owner, a newline, then {@code <N>:<index>} */
    static ByteSequence value(String owner, int permits, int index) {
        return EtcdKeys.value(owner, PermitTokens.value(permits, index));
    }

    /** @return the N a key was put with, or 0 when its value is not one (it then holds nothing) */
    static int permitsOf(ByteSequence value) {
        return PermitTokens.permitsOf(LeasedKeys.payloadOf(value));
    }

    /** @return the index a key was put with in its unit (0 when its value has none) */
    static int indexOf(ByteSequence value) {
        return PermitTokens.indexOf(LeasedKeys.payloadOf(value));
    }

    /**
     * The holding keys: in create-revision order, the keys of one revision (a unit) hold when they
     * and every key before them are at most their N.
     *
     * @param kvs a name's keys in create-revision order
     * @return those that hold, in token order
     */
    static List<KeyValue> holding(List<KeyValue> kvs) {
        List<KeyValue> out = new ArrayList<>();
        int start = 0;
        while (start < kvs.size()) {
            int end = start;
            while (end + 1 < kvs.size() && kvs.get(end + 1).getCreateRevision() == kvs.get(start).getCreateRevision()) {
                end++;
            }
            for (int i = start; i <= end; i++) { // end + 1 keys up to and with this unit
                if (end + 1 <= permitsOf(kvs.get(i).getValue())) {
                    out.add(kvs.get(i));
                }
            }
            start = end + 1;
        }
        out.sort(Comparator.comparingLong(EtcdPermitKeys::token));
        return out;
    }
}
