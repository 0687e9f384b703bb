package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.semaphore.PermitTokens;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The units of {@link ZooKeeperSemaphoreStore}: the k permits of one request are k ephemeral
 * sequential nodes created in one transaction, so their sequences are contiguous and they share one
 * {@code czxid}. A permit node's data is {@code <N>:<index>} (the N of the call that created it, the
 * permit's index 0 to k − 1 in its unit); its token is {@code czxid * 65536 + index} — distinct and
 * increasing with every later grant (zxids are global and strictly increasing across leader
 * elections and restarts), exact while the zxid's epoch (its high 32 bits) is below 2^15. Data
 * without an index (a plain {@code <N>}) reads as index 0.
 */
final class ZooKeeperPermitNodes {

    /** The most permits one request may ask for. */
    static final int MAX_COUNT = PermitTokens.MAX_COUNT;

    private ZooKeeperPermitNodes() {
    }

    /**
     * @param count the permits a request asks for
     * @return the error for a request of more than {@link #MAX_COUNT}
     */
    static IllegalArgumentException tooMany(int count) {
        return PermitTokens.tooMany(count, "ZooKeeper", "czxid");
    }

    /**
     * @param czxid a unit's czxid
     * @param index a permit's index in the unit
     * @return the permit's token
     * @throws ArithmeticException when it does not fit in a {@code long} (an epoch of 2^15 or more):
     *                             the grant fails rather than hand out a wrapped token
     */
    static long token(long czxid, int index) {
        return PermitTokens.token(czxid, index);
    }

    /** @return the data of a permit's node */
    static byte[] data(int permits, int index) {
        return PermitTokens.value(permits, index).getBytes(StandardCharsets.US_ASCII);
    }

    /** @return the N a node was created with, or 0 when its data is not one (it then holds nothing) */
    static int permitsOf(byte[] data) {
        return PermitTokens.permitsOf(new String(data, StandardCharsets.US_ASCII));
    }

    /** @return the index a node was created with in its unit (0 when its data has none) */
    static int indexOf(byte[] data) {
        return PermitTokens.indexOf(new String(data, StandardCharsets.US_ASCII));
    }

    /**
     * One permit node as read.
     *
     * @param owner the owner id of the node
     * @param rank  its place in the listing, from 0
     * @param czxid its czxid (its unit's)
     * @param data  its data
     */
    record Node(String owner, int rank, long czxid, byte[] data) {
    }

    /**
     * The holders among a name's nodes: the nodes of one czxid (a unit) hold when the unit's highest
     * node is among their N lowest (a node deleted after the listing only moves the ones above it
     * down: a rank from the listing is an upper bound).
     *
     * @param nodes    the nodes read, in listing (sequence) order
     * @param estimate the TTL to report (the session timeout)
     * @return the holders, in token order
     */
    static List<Holder> holders(List<Node> nodes, Duration estimate) {
        List<Holder> out = new ArrayList<>();
        int start = 0;
        while (start < nodes.size()) {
            int end = start;
            while (end + 1 < nodes.size() && nodes.get(end + 1).czxid() == nodes.get(start).czxid()) {
                end++;
            }
            int highest = nodes.get(end).rank();
            for (int i = start; i <= end; i++) {
                Node n = nodes.get(i);
                if (highest < permitsOf(n.data())) {
                    out.add(new Holder(n.owner(), token(n.czxid(), indexOf(n.data())), estimate));
                }
            }
            start = end + 1;
        }
        out.sort(Comparator.comparingLong(Holder::token));
        return out;
    }
}
