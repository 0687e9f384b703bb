package io.reactivelocks.fencing;

/**
 * The fencing rule, in one place: a resource that has seen tokens up to {@code highestSeen}
 * admits a write carrying {@code token} when {@code token >= highestSeen}. An equal token is the
 * same grant writing again (a second write under one lease) and is accepted; a lower token is a
 * writer whose grant was superseded (a paused process, a lease that expired while the write was in
 * flight) and is refused. Every fenced-write helper of this library, in every store, applies it.
 */
public final class Fencing {

    private Fencing() {
    }

    /**
     * @param highestSeen the highest token the resource has accepted so far
     * @param token       the writer's token
     * @return {@code true} when the write may proceed ({@code token >= highestSeen})
     */
    public static boolean admits(long highestSeen, long token) {
        return token >= highestSeen;
    }
}
