package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.LockEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Revocation requests to the grants of a semaphore or read-write lock on ZooKeeper, kept in the
 * data of the name's own node {@code <root>-semaphore/<segment>} or {@code <root>-rw/<segment>} —
 * the container of the grant nodes, whose data nothing else uses (the grant logic lists its
 * children and reads the grant nodes only, and the waiters watch grant nodes and the children, never
 * the container's data). Unlike the lock's single request ({@link LockNodes#revocation}), a name has
 * several holders asked one after the other (the admin asks every permit, reader and writer), so the
 * data is a list: one entry per owner asked, each tagged with the data version its write made,
 * {@code <version>:<length of value>:<value>} one after the other, the value being the lock's
 * {@code <length of owner>:<owner><reason>}. A request is a compare-and-set of the data (read, then
 * {@code setData} at the version read; again on a concurrent write) that adds the owner's entry
 * (replacing an older one of that owner) and drops the entries of owners with no grant node left, so
 * the data stays as small as the name's holders. An events stream ({@link ChildrenEvents}) watches
 * the data and reports the entries tagged above the version it read last: two requests written in
 * quick succession are both reported, although the data watch fires once.
 */
final class GrantRevocations {

    /** How many times a request writes again after a concurrent request changed the data first. */
    private static final int MAX_CONFLICTS = 16;

    private GrantRevocations() {
    }

    /**
     * One request in the data of the name's node.
     *
     * @param version the data version the write that added it made
     * @param value   {@code <length of owner>:<owner><reason>}
     */
    record Entry(int version, String value) {
        /** @return the owner asked, or {@code null} when the value is not a request */
        @Nullable String owner() {
            LockEvent.Revoked r = request("");
            return r == null ? null : r.owner();
        }

        /** @return the request this entry stands for on {@code name}, or {@code null} when it is not one */
        LockEvent.@Nullable Revoked request(String name) {
            return LockNodes.revoked(name, value.getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * Writes a request for the grant of {@code owner} into the data of the name's node {@code path}.
     * No node is created: a name whose node is gone has no grant to ask (nothing is written).
     *
     * @param async   the client
     * @param path    the name's node
     * @param ownerOf the owner of a child of the name's node (a grant node), {@code null} for another child
     * @param owner   the grant asked
     * @param reason  why
     * @return completes once written (or when the node is gone); errors are the client's
     */
    static Mono<Void> request(AsyncCuratorFramework async, String path, Function<String, @Nullable String> ownerOf,
            String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        String value = new String(LockNodes.revocation(owner, reason), StandardCharsets.UTF_8);
        return Mono.defer(() -> {
                    Stat stat = new Stat();
                    return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(path))
                            .zipWith(Mono.fromCompletionStage(() -> async.getChildren().forPath(path)))
                            .flatMap(read -> {
                                Set<String> holders = read.getT2().stream().map(ownerOf).filter(Objects::nonNull)
                                        .collect(Collectors.toSet());
                                List<Entry> kept = new ArrayList<>();
                                for (Entry e : decode(read.getT1())) {
                                    String o = e.owner();
                                    if (o != null && !o.equals(owner) && holders.contains(o)) {
                                        kept.add(e);
                                    }
                                }
                                kept.add(new Entry(stat.getVersion() + 1, value));
                                return Mono.fromCompletionStage(() -> async.setData().withVersion(stat.getVersion())
                                        .forPath(path, encode(kept)));
                            });
                })
                .retryWhen(Retry.max(MAX_CONFLICTS).filter(e -> ZooKeeperErrors.code(e) == KeeperException.Code.BADVERSION)
                        .onRetryExhaustedThrow((spec, rs) -> rs.failure()))
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty());
    }

    /** @return the data holding {@code entries}, UTF-8 */
    static byte[] encode(List<Entry> entries) {
        StringBuilder b = new StringBuilder();
        for (Entry e : entries) {
            b.append(e.version()).append(':').append(e.value().length()).append(':').append(e.value());
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param data the data of the name's node
     * @return its entries; none for empty data, and those before the first malformed one otherwise
     */
    static List<Entry> decode(byte @Nullable [] data) {
        List<Entry> out = new ArrayList<>();
        if (data == null || data.length == 0) {
            return out;
        }
        String s = new String(data, StandardCharsets.UTF_8);
        int at = 0;
        try {
            while (at < s.length()) {
                int c1 = s.indexOf(':', at);
                int c2 = s.indexOf(':', c1 + 1);
                int version = Integer.parseInt(s.substring(at, c1));
                int end = c2 + 1 + Integer.parseInt(s.substring(c1 + 1, c2));
                out.add(new Entry(version, s.substring(c2 + 1, end)));
                at = end;
            }
        } catch (RuntimeException e) { // no separator, not a number, too short: not ours from here on
            return out;
        }
        return out;
    }
}
