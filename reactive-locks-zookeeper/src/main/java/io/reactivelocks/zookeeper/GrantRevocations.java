package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.LockEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Revocation requests to the grants of a semaphore or read-write lock on ZooKeeper, kept in the
 * data of the name's revocation node {@code <root>-semaphore/r-<base64url(name)>} or
 * {@code <root>-rw/r-<base64url(name)>} ({@link ZNodeNames#revocationPath}): a persistent sibling of
 * the name's own node {@code <root>-…/<segment>} (the container of the grant nodes), as the lock's
 * revocation node is of the lock's node. Not the name's node itself: each create of a grant node
 * writes that node's data in the same transaction (its stat tells the children before the new one,
 * see {@link ZooKeeperReadWriteStore}), so the name's node's data holds nothing and nobody watches it.
 * The revocation node is no lock name ({@link ZNodeNames#nameOf} skips it) and is not read by any grant
 * decision, holder read, renewal, release or waiter. Unlike the lock's single request
 * ({@link LockNodes#revocation}), a name has several holders asked one after the other (the admin
 * asks every permit, reader and writer), so the data is a list: one entry per owner asked, each
 * tagged with the data version its write made (0 for the write that creates the node),
 * {@code <version>:<length of value>:<value>} one after the other, the value being the lock's
 * {@code <length of owner>:<owner><reason>}. A request is a compare-and-set of the data (read, then
 * {@code multi(check(name's node), setData(revocation node))} at the version read, or
 * {@code multi(check(name's node), create(revocation node))} when it is missing; again on a
 * concurrent write or create), written only while the name's node exists (a name whose node is gone
 * has no grant to ask); it adds the owner's entry (replacing an older one of that owner) and drops
 * the entries of owners with no grant node left (the name's node's children, listed with the read),
 * so the data stays as small as the name's holders. The revocation node stays when the name's node
 * goes, as the lock's does. An events stream ({@link ChildrenEvents}) watches the revocation node's
 * data and reports the entries tagged above the version it read last: two requests written in quick
 * succession are both reported, although the data watch fires once.
 */
final class GrantRevocations {

    /** How many times a request writes again after a concurrent request changed the data first. */
    private static final int MAX_CONFLICTS = 16;

    private GrantRevocations() {
    }

    /**
     * One request in the data of the name's revocation node.
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
     * Writes a request for the grant of {@code owner} into the data of the name's revocation node,
     * creating that node on the first request, provided the name's node {@code path} exists: a name
     * whose node is gone has no grant to ask (nothing is written).
     *
     * @param async      the client
     * @param path       the name's node
     * @param revocation the name's revocation node, a sibling of {@code path}
     * @param acl        the ACL of the revocation node when it is created
     * @param ownerOf    the owner of a child of the name's node (a grant node), {@code null} for another child
     * @param owner      the grant asked
     * @param reason     why
     * @return completes once written (or when the name's node is gone); errors are the client's
     */
    static Mono<Void> request(AsyncCuratorFramework async, String path, String revocation, List<ACL> acl,
            Function<String, @Nullable String> ownerOf, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        String value = new String(LockNodes.revocation(owner, reason), StandardCharsets.UTF_8);
        return Mono.defer(() -> {
                    Stat stat = new Stat();
                    Mono<byte[]> data = Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(revocation))
                            .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> {
                                stat.setVersion(-1); // missing: created by the write
                                return Mono.just(new byte[0]);
                            });
                    // NONODE from the listing: the name's node is gone, nothing to ask (the error ends the request)
                    return data.zipWith(Mono.fromCompletionStage(() -> async.getChildren().forPath(path)))
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
                                int version = stat.getVersion();
                                kept.add(new Entry(version + 1, value));
                                CuratorOp write = version < 0
                                        ? async.transactionOp().create().withOptions(CreateMode.PERSISTENT, acl, false)
                                                .forPath(revocation, encode(kept))
                                        : async.transactionOp().setData().withVersion(version).forPath(revocation, encode(kept));
                                List<CuratorOp> ops = List.of(async.transactionOp().check().withVersion(-1).forPath(path), write);
                                return Mono.fromCompletionStage(() -> async.transaction().forOperations(ops)).thenReturn(true)
                                        // NONODE: the name's node went since the listing (the revocation node is not
                                        // deleted, and its parent is the name's node's parent): nothing to ask
                                        .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(false));
                            });
                })
                // a concurrent request wrote (BADVERSION) or created the node (NODEEXISTS) first: read again
                .retryWhen(Retry.max(MAX_CONFLICTS).filter(e -> ZooKeeperErrors.code(e) == KeeperException.Code.BADVERSION
                                || ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS)
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
     * @param data the data of the name's revocation node
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
