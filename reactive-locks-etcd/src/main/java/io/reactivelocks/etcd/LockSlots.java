package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Which key each owner of a backend uses under a name. An owner takes the lowest slot of the name
 * not reserved by another owner of this backend, and its key is that slot on the session lease
 * ({@link EtcdKeys#slot}): one name acquired and released over and over by one backend uses one
 * key, so its range does not fill up with deleted keys (etcd keeps each in its index until a
 * compaction, and every read of the range visits them). A retried acquire of an owner finds its
 * own slot again. A slot stays reserved until its key is known gone — a delete of it confirmed by
 * etcd with no acquire transaction of its owner still in the driver ({@link AbandonedTransactions})
 * — so two owners never share a key, and every key in a reserved slot is its owner's. The deletes of
 * the queue and of the clean-up are guarded by the create revision the key was put with
 * ({@link LockKeys#deleteOwned}), so a late one cannot remove the key of the next owner in the same
 * slot, which has a later create revision. A release with no acquire transaction of its owner in the
 * driver sends one unguarded delete ({@link AbandonedTransactions#trackedRelease}): while that delete
 * is on its way the slot is still reserved (it is freed by the delete's own confirmation), and when
 * its answer is lost the slot is {@linkplain Place#retire() retired} instead of freed.
 */
final class LockSlots {

    /** Owners' places by held key ({@link EtcdKeys#heldKey}). */
    private final Map<String, Place> places = new ConcurrentHashMap<>();
    // guarded by this: the slots reserved under each name
    private final Map<String, BitSet> reserved = new HashMap<>();

    /** @return the owner's place under the name, reserving the lowest free slot when it has none */
    Place place(String name, String owner) {
        String held = EtcdKeys.heldKey(name, owner);
        Place p = places.get(held);
        if (p != null) {
            return p;
        }
        synchronized (this) {
            p = places.get(held);
            if (p == null) {
                BitSet slots = reserved.computeIfAbsent(name, n -> new BitSet());
                int slot = slots.nextClearBit(0);
                slots.set(slot);
                p = new Place(name, owner, slot);
                places.put(held, p);
            }
            return p;
        }
    }

    /** @return the owner's place under the name, or null when it has none (never asked, or left) */
    @Nullable Place find(String name, String owner) {
        return places.get(EtcdKeys.heldKey(name, owner));
    }

    /**
     * Frees the place's slot: its key is known gone and no transaction of its owner can put it again. A
     * {@linkplain Place#retire() retired} slot stays reserved: only its owner's place goes.
     */
    void free(Place p) {
        synchronized (this) {
            if (places.remove(EtcdKeys.heldKey(p.name, p.owner), p) && !p.retired) {
                BitSet slots = reserved.get(p.name);
                slots.clear(p.slot);
                if (slots.isEmpty()) {
                    reserved.remove(p.name);
                }
            }
        }
    }

    /** @return how many owners hold a place (tests) */
    int size() {
        return places.size();
    }

    /** The key an owner last used, and the create revision it was put with when known (else 0). */
    record At(ByteSequence key, long token) {
    }

    /** One owner's slot under one name, and the key it last used. */
    static final class Place {
        final String name;
        final String owner;
        final int slot;
        // guarded by this
        private @Nullable At at;
        /** Set when an unguarded delete of this slot's key may still be on its way: the slot is never handed out again. */
        volatile boolean retired;

        Place(String name, String owner, int slot) {
            this.name = name;
            this.owner = owner;
            this.slot = slot;
        }

        /** @return the key last used and its token when known, or null when no transaction was sent yet */
        synchronized @Nullable At at() {
            return at;
        }

        /**
         * The owner's next transaction uses {@code key} (its slot on the current session lease).
         *
         * @return the key used before when it was another one (a session lost since) whose token is known,
         *         for the caller to delete; else null
         */
        synchronized @Nullable At use(ByteSequence key) {
            At before = at;
            if (before != null && before.key().equals(key)) {
                return null;
            }
            at = new At(key, 0);
            return before != null && before.token() > 0 ? before : null;
        }

        /**
         * Keeps this slot from being handed out again once the place is freed: an unguarded delete of its key
         * ({@link AbandonedTransactions#trackedRelease}) ended without an answer and may still run later, when it
         * must not find another owner's key there. It costs the name one slot number for as long as the backend
         * lives (the key itself is deleted by the guarded retries as usual).
         */
        void retire() {
            retired = true;
        }

        /** Notes that {@code key} was put with create revision {@code token} (the latest generation known wins). */
        synchronized void put(ByteSequence key, long token) {
            if (at != null && at.key().equals(key) && token > at.token()) {
                at = new At(key, token);
            }
        }
    }
}
