package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Window claims on ZooKeeper, decided by the server's clock: the time of a write is the
 * {@code mtime} the leader stamps on the node. One persistent node per name and period,
 * {@code <root>-window/<segment(name)>.<period ms>}, whose data is the highest window claimed
 * before its last write. A claim is a read (data {@code D}, {@code mtime} {@code Ta}, version) and
 * one versioned {@code setData} of {@code D' = max(D, floor(Ta / period))}; the write's own
 * {@code mtime} {@code T} gives this call's window {@code floor(T / period)}, which is claimed when
 * it is greater than {@code D'} — every window claimed so far. A version conflict means another
 * caller wrote during this call, so this call's window is claimed already (linearized just after
 * that write): nothing to retry. The first claim creates the node. The token is the write's
 * {@code mzxid}: zxids are global and strictly increasing, also across leader elections.
 *
 * <p>So at most one claim per window holds on the leader's clock, even if it steps back. Every
 * attempt is a write (a loser's too); a connection loss during the write can make Curator's retry
 * find its own write as a conflict, and the window is then lost rather than claimed twice. Nodes
 * stay (one per name and period), like PostgreSQL's rows.
 */
final class ZooKeeperWindowStore implements WindowStore {

    private static final byte[] NOTHING_CLAIMED = bytes(-1);

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final AsyncCuratorFramework async;
    private final String root;
    private final List<ACL> acl;

    /**
     * @param client     the started Curator client
     * @param ownsClient whether {@link #close()} closes it
     * @param root       the parent of the window nodes ({@code <lock root>-window})
     * @param acl        the ACL of created nodes
     */
    ZooKeeperWindowStore(CuratorFramework client, boolean ownsClient, String root, List<ACL> acl) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.async = AsyncCuratorFramework.wrap(client);
        this.root = Objects.requireNonNull(root, "root");
        this.acl = List.copyOf(acl);
    }

    String path(String name, Duration period) {
        return root + "/" + ZNodeNames.segment(name) + "." + period.toMillis();
    }

    private static byte[] bytes(long window) {
        return Long.toString(window).getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        long p = period.toMillis();
        return Mono.defer(() -> {
            String path = path(name, period);
            Stat read = new Stat();
            return Mono.fromCompletionStage(() -> async.getData().storingStatIn(read).forPath(path))
                    .flatMap(data -> {
                        long before = Math.max(Long.parseLong(new String(data, StandardCharsets.US_ASCII)),
                                Math.floorDiv(read.getMtime(), p));
                        return Mono.fromCompletionStage(() -> async.setData().withVersion(read.getVersion()).forPath(path, bytes(before)))
                                .flatMap(written -> grant(written, p, before))
                                .onErrorResume(e -> isCode(e, KeeperException.Code.BADVERSION) || isCode(e, KeeperException.Code.NONODE),
                                        e -> Mono.empty());
                    })
                    .onErrorResume(e -> isCode(e, KeeperException.Code.NONODE), e -> create(path, p))
                    .onErrorMap(e -> ZooKeeperErrors.map(name, "window claim", e));
        });
    }

    private Mono<WindowGrant> create(String path, long p) {
        Stat created = new Stat();
        return Mono.fromCompletionStage(() -> async.create()
                        .withOptions(EnumSet.of(CreateOption.createParentsIfNeeded), CreateMode.PERSISTENT, acl, created)
                        .forPath(path, NOTHING_CLAIMED))
                .flatMap(ignored -> grant(created, p, -1))
                .onErrorResume(e -> isCode(e, KeeperException.Code.NODEEXISTS), e -> Mono.empty());
    }

    private static Mono<WindowGrant> grant(Stat written, long p, long claimedBefore) {
        long window = Math.floorDiv(written.getMtime(), p);
        if (window <= claimedBefore) {
            return Mono.empty();
        }
        return Mono.just(new WindowGrant(window, written.getMzxid(), Duration.ofMillis((window + 1) * p - written.getMtime())));
    }

    private static boolean isCode(Throwable e, KeeperException.Code code) {
        return ZooKeeperErrors.code(e) == code;
    }

    /** @return a {@code Mono} that closes the Curator client when this store owns it (on a bounded-elastic thread) */
    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "ZooKeeperWindowStore{" + root + "}";
    }
}
