package io.reactivelocks.rwlock;

import io.reactivelocks.LockOptions;
import java.util.Objects;

/**
 * Options of a {@link ReadWriteLock}: the timing of every grant ({@link LockOptions}: lease time,
 * renewal, wait timeout, backoff, request timeout, drift, clock, scheduler) and who goes first when
 * readers and writers contend.
 *
 * @param lockOptions the timing options, the defaults of the methods that take none
 * @param preference  {@link Preference#WRITERS} (the default): a waiting writer blocks new readers;
 *                    {@link Preference#READERS}: readers enter whenever no writer holds
 */
public record ReadWriteLockOptions(LockOptions lockOptions, Preference preference) {

    /** Who goes first when readers and writers contend. */
    public enum Preference {
        /**
         * Writer-preferring (the default): a writer that waits leaves an intent on the store (expiring
         * one lease time after its last attempt, so an abandoned waiter blocks no one for long) and no
         * new reader is granted while an intent exists; writers cannot starve.
         */
        WRITERS,
        /**
         * Reader-preferring: readers are granted whenever no writer holds, even while writers wait; a
         * writer waits until no reader holds, so a steady stream of readers can starve writers.
         */
        READERS
    }

    /** Checks the fields. */
    public ReadWriteLockOptions {
        Objects.requireNonNull(lockOptions, "lockOptions");
        Objects.requireNonNull(preference, "preference");
    }

    /** @return {@link LockOptions#defaults()}, writer-preferring */
    public static ReadWriteLockOptions defaults() {
        return new ReadWriteLockOptions(LockOptions.defaults(), Preference.WRITERS);
    }

    /**
     * @param lockOptions the timing options
     * @return writer-preferring options with that timing
     */
    public static ReadWriteLockOptions of(LockOptions lockOptions) {
        return new ReadWriteLockOptions(lockOptions, Preference.WRITERS);
    }

    /**
     * @param lockOptions the timing options
     * @return a copy with that timing
     */
    public ReadWriteLockOptions withLockOptions(LockOptions lockOptions) {
        return new ReadWriteLockOptions(lockOptions, preference);
    }

    /**
     * @param preference who goes first
     * @return a copy with that policy
     */
    public ReadWriteLockOptions withPreference(Preference preference) {
        return new ReadWriteLockOptions(lockOptions, preference);
    }
}
