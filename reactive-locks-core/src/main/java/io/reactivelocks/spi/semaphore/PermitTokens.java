package io.reactivelocks.spi.semaphore;

/**
 * The token scheme of semaphore stores whose k permits of one request are k entries written in one
 * transaction, sharing one id from a global, strictly increasing sequence (etcd's create revision,
 * ZooKeeper's czxid): a permit's token is {@code unitId * 65536 + index}, distinct and increasing with
 * every later grant. An entry's value is {@code <N>:<index>} (the N of the call that wrote it, the
 * permit's index 0 to k − 1 in its unit); a value without an index (a plain {@code <N>}) reads as
 * index 0, and one that is not a number holds nothing.
 */
public final class PermitTokens {

    /** Tokens a unit spans: a permit's token is its unit's id times this, plus its index. */
    public static final long SPAN = 65_536;
    /** The most permits one request may ask for. */
    public static final int MAX_COUNT = (int) SPAN - 1;

    private PermitTokens() {
    }

    /**
     * @param count the permits a request asks for
     * @param store the store's name, for the message
     * @param unit  what the store's unit id is ("revision", "czxid"), for the message
     * @return the error for a request of more than {@link #MAX_COUNT}
     */
    public static IllegalArgumentException tooMany(int count, String store, String unit) {
        return new IllegalArgumentException("count must be at most " + MAX_COUNT + " on " + store + " (a permit's token is its unit's "
                + unit + " * " + SPAN + " + its index), was " + count);
    }

    /**
     * @param unitId the unit's id (its entries' shared create revision or czxid)
     * @param index  the permit's index in the unit
     * @return the permit's token
     * @throws ArithmeticException when it does not fit in a {@code long}: the grant fails rather than
     *                             hand out a wrapped token
     */
    public static long token(long unitId, int index) {
        return Math.addExact(Math.multiplyExact(unitId, SPAN), index);
    }

    /**
     * @param permits the N of the call
     * @param index   the permit's index in its unit
     * @return the value of the permit's entry
     */
    public static String value(int permits, int index) {
        return permits + ":" + index;
    }

    /**
     * @param value an entry's value
     * @return the N it was written with, or 0 when it is not one (it then holds nothing)
     */
    public static int permitsOf(String value) {
        int colon = value.indexOf(':');
        try {
            return Integer.parseInt(colon < 0 ? value : value.substring(0, colon));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * @param value an entry's value
     * @return the index it was written with in its unit (0 when it has none)
     */
    public static int indexOf(String value) {
        int colon = value.indexOf(':');
        try {
            return colon < 0 ? 0 : Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
