/**
 * The engine shared by the concepts whose grants are leases handed out by a grant-or-busy store
 * call (semaphore permits, read-write lock grants): the acquire loop (waiting on release
 * notifications, the earliest expiry and jittered backoff), cancel clean-up, renewal and loss of
 * each grant, scoped use, hold streams and observation. Not API.
 */
@NullMarked
package io.reactivelocks.internal.grant;

import org.jspecify.annotations.NullMarked;
