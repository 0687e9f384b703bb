package io.reactivelocks.examples.webflux;

/**
 * The answer to {@code POST /stock/{sku}/reserve}.
 *
 * @param sku       the stock keeping unit
 * @param outcome   {@code reserved} (200), {@code insufficient} (409: fewer than {@code requested}
 *                  units left), {@code fenced} (409: the write carried a superseded token and was
 *                  rejected, nothing changed)
 * @param requested the quantity asked for
 * @param available units left after this request (for {@code fenced}: as read under the lock)
 * @param token     the fencing token of the lease the request ran under
 */
public record Reservation(String sku, String outcome, long requested, long available, long token) {

    /** Outcome of a successful reservation. */
    public static final String RESERVED = "reserved";
    /** Outcome when there is not enough stock. */
    public static final String INSUFFICIENT = "insufficient";
    /** Outcome when the fenced write was rejected. */
    public static final String FENCED = "fenced";
}
