package io.reactivelocks;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A granted lock. Ownership belongs to this object (its random {@link #owner()} id), never to a
 * thread: any thread may release it, and it may travel across threads with the reactive chain.
 *
 * <p>A {@code Lease} value is a snapshot: {@link LockClient#hold} emits a new one after each
 * renewal (same owner and token, later {@link #validUntilNanos()}); every snapshot of one grant
 * shares the same {@link #release()} and {@link #lost()}.
 *
 * <p>While held, the client renews the lease in the background (every renewal interval) until
 * it is released, lost, or the client is closed.
 */
public interface Lease {

    /** @return the lock name */
    String name();

    /** @return the random owner id (at least 128 bits, unguessable) that the store records for this grant */
    String owner();

    /**
     * @return the fencing token: strictly greater than every token granted before for this
     *         name. Pass it to the protected resource, which must reject lower tokens.
     */
    long token();

    /**
     * @return the local monotonic deadline (on the client's clock, in nanoseconds) until which
     *         this lease is known to be valid: request send time + granted TTL − drift allowance
     */
    long validUntilNanos();

    /**
     * @return the time left until the grant's <em>current</em> deadline (later renewals move it
     *         past this snapshot's {@link #validUntilNanos()}); zero when it has passed
     */
    Duration remaining();

    /** @return {@code true} while the grant is held: not released, not lost, current deadline not passed */
    boolean isValid();

    /**
     * Releases the lock on the server, owner-checked (compare-and-delete): it never removes a
     * lock that another owner holds now. Idempotent: the second and later subscriptions
     * complete at once. Stops renewal and completes the hold streams of this lease. Cancelling the
     * subscription only stops listening: the release goes on to the server's answer (bounded by the
     * request timeout), and the client's {@code close()} waits for it.
     *
     * @return a {@code Mono} that releases on subscribe and completes when the server confirmed
     *         (or the lease was already gone); errors with {@link LockBackendException} if the
     *         server could not be reached — the lease then simply expires by its TTL
     */
    Mono<Void> release();

    /**
     * Releases at the end of work done under this lease — what {@code withLock} does after its body,
     * for facades and callers that run the work themselves. Like {@link #release()}, except that a
     * release the store does not confirm is not an error: it is reported (one WARN line,
     * {@link LockListener#onReleaseUnconfirmed}, the client's {@code unconfirmedReleaseCount}) and the
     * {@code Mono} completes, since renewal has stopped, the lease expires by itself and its token is
     * fenced — finished work must not be reported as failed (a retrying caller would do it twice).
     *
     * @return a {@code Mono} that releases on subscribe and completes when the store confirmed, or
     *         when it could not and the lease was left to expire
     */
    default Mono<Void> releaseAfterWork() {
        return release().onErrorResume(e -> Mono.empty());
    }

    /**
     * @return the payload stored with this grant — the one given through
     *         {@link LockOptions#payload()} at acquire, or the last one set by a completed
     *         {@link #updatePayload(String)} — or {@code null} for none
     */
    @Nullable String payload();

    /**
     * Replaces the payload stored with this grant, owner- and token-checked on the store;
     * observers see a new {@link LockState.Held} with it. Reentrant {@code withLock} calls share
     * the outer lease, and so its payload.
     *
     * @param payload at most {@link LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes, well-formed
     *                UTF-16; {@code null} removes the payload
     * @return a {@code Mono} that writes on subscribe and completes when the store confirmed;
     *         errors with {@link LockLostException} when this lease is no longer held (released,
     *         lost, or another owner's now), {@link LockBackendException} when the store fails
     * @throws IllegalArgumentException naming {@code payload} when it is too long or malformed
     */
    Mono<Void> updatePayload(@Nullable String payload);

    /**
     * @return a {@code Mono} that completes when this lease is lost (its deadline passed
     *         without a confirmed renewal, or the server reported it is no longer ours). It
     *         does not complete when the lease is released by its owner.
     */
    Mono<Void> lost();

    /**
     * The first revocation request an operator sends to this lease's holder while this is
     * subscribed ({@link io.reactivelocks.admin.LockAdmin#revoke}): cooperative — the holder decides
     * whether to finish and release; one that ignores it keeps the lease until it is
     * force-released. Requests are not stored: subscribe while holding to receive them.
     *
     * @return a {@code Mono} of the request's reason; completes empty when the lease ends (released
     *         or lost) first, and at once for a lease that cannot be asked (a multi-lock's set as a
     *         whole: ask its parts)
     */
    default Mono<String> revoked() {
        return Mono.empty();
    }
}
