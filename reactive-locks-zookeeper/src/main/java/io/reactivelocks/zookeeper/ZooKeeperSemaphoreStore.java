package io.reactivelocks.zookeeper;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Semaphores on ZooKeeper: each permit is an ephemeral sequential node
 * {@code <root>-semaphore/<segment(name)>/<owner>-<sequence>} of the holder's session (so a dead
 * holder's permit goes when its session expires), under a container node. A grant creates the
 * owners' nodes (data: the N of the call, in decimal), then lists the children: when every new node
 * is among the N lowest sequences, the permits are granted and each token is its node's
 * {@code czxid} (global, strictly increasing); otherwise the nodes are deleted again and the answer
 * is busy. Any node below a granted one existed when that grant listed, so at most N nodes are
 * granted at once. Who holds follows from the children alone — a node among the N lowest (its own
 * N) — so every change of the holders is a change of the children, which observers watch (a mark
 * written after the grant, as the node's data, would change no child, and an observer that listed
 * between the create and the mark would miss the holder until some other change). A permit lives as long as the session: its TTL is the negotiated session timeout
 * (at most the lease time asked), and renewal checks that the node is still there.
 *
 * <p>No herd: an attempt lists the children first and answers busy without creating anything when
 * the nodes there already take the permits (a held node stays among the N lowest, so the count is
 * never below the holders). A waiter thus changes nothing while it waits: the children change only
 * when a permit is granted or released, and each change wakes one local waiter (the engine's
 * choice for a semaphore) instead of setting off a chain of asking nodes created and deleted that
 * woke the others in turn. Waiters keep no node (no place in a queue): which waiter gets a freed
 * permit is the engine's order, not the sequence.
 */
final class ZooKeeperSemaphoreStore implements SemaphoreStore {


    private final CuratorFramework client;
    private final boolean ownsClient;
    private final AsyncCuratorFramework async;
    private final String root;
    private final List<ACL> acl;

    /**
     * @param client     the started Curator client
     * @param ownsClient whether {@link #close()} closes it
     * @param root       the parent of the semaphore nodes ({@code <lock root>-semaphore})
     * @param acl        the ACL of created nodes
     */
    ZooKeeperSemaphoreStore(CuratorFramework client, boolean ownsClient, String root, List<ACL> acl) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.async = AsyncCuratorFramework.wrap(client);
        this.root = Objects.requireNonNull(root, "root");
        this.acl = List.copyOf(acl);
    }

    String path(String name) {
        return root + "/" + ZNodeNames.segment(name);
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    private Duration ttl(Duration leaseTime) {
        long negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 && negotiated < leaseTime.toMillis() ? Duration.ofMillis(negotiated) : leaseTime;
    }

    private Mono<List<ZNodeNames.Child>> children(String name) {
        return Mono.fromCompletionStage(() -> async.getChildren().forPath(path(name)))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.just(List.of()))
                .map(names -> {
                    List<ZNodeNames.Child> out = new ArrayList<>();
                    for (String n : names) {
                        ZNodeNames.Child c = ZNodeNames.parse(n);
                        if (c != null) {
                            out.add(c);
                        }
                    }
                    out.sort(ZNodeNames.BY_SEQUENCE);
                    return out;
                });
    }

    private static ZNodeNames.@Nullable Child find(List<ZNodeNames.Child> children, String owner) {
        for (ZNodeNames.Child c : children) {
            if (c.owner().equals(owner)) {
                return c;
            }
        }
        return null;
    }

    private Mono<Stat> stat(String name, ZNodeNames.Child c) {
        return Mono.fromCompletionStage(() -> async.checkExists().forPath(path(name) + "/" + c.node()));
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.defer(() -> children(name).flatMap(children -> {
            if (find(children, owners.get(0)) != null) { // a retried request
                List<ZNodeNames.Child> lowest = children.subList(0, Math.min(permits, children.size()));
                return Flux.fromIterable(owners)
                        .concatMap(o -> {
                            ZNodeNames.Child c = find(lowest, o);
                            return c == null ? Mono.<Long>error(new IllegalStateException("incomplete or not among the lowest"))
                                    : stat(name, c).map(Stat::getCzxid);
                        })
                        .collectList()
                        .map(tokens -> (PermitGrant) new PermitGrant.Granted(tokens, ttl(leaseTime)))
                        .onErrorResume(IllegalStateException.class, e -> deleteAll(name, owners).thenReturn(new PermitGrant.Busy(null)));
            }
            if (children.size() + owners.size() > permits) {
                // busy without creating a node: a node created and deleted again would change the
                // children, and so wake the other waiters to ask in turn (a herd that feeds itself)
                return Mono.just((PermitGrant) new PermitGrant.Busy(null));
            }
            return ask(name, owners, permits, leaseTime);
        })).onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore grant", e));
    }

    private Mono<PermitGrant> ask(String name, List<String> owners, int permits, Duration leaseTime) {
        List<String> created = new ArrayList<>();
        return Flux.fromIterable(owners)
                .concatMap(o -> {
                    Stat stat = new Stat();
                    return Mono.fromCompletionStage(() -> async.create()
                                    .withOptions(EnumSet.of(CreateOption.createParentsAsContainers), CreateMode.EPHEMERAL_SEQUENTIAL, acl, stat)
                                    .forPath(path(name) + "/" + ZNodeNames.nodeName(o), data(permits)))
                            .doOnNext(created::add)
                            .map(p -> stat.getCzxid());
                })
                .collectList()
                .flatMap(tokens -> children(name).flatMap(children -> {
                    List<ZNodeNames.Child> lowest = children.subList(0, Math.min(permits, children.size()));
                    for (String o : owners) {
                        if (find(lowest, o) == null) {
                            return deletePaths(created).thenReturn((PermitGrant) new PermitGrant.Busy(null));
                        }
                    }
                    return Mono.just((PermitGrant) new PermitGrant.Granted(tokens, ttl(leaseTime)));
                }))
                .onErrorResume(e -> deletePaths(created).then(Mono.error(e)));
    }

    private static byte[] data(int permits) {
        return Integer.toString(permits).getBytes(StandardCharsets.US_ASCII);
    }

    /** @return the N a node was created with, or 0 when its data is not one (it then holds nothing) */
    private static int permitsOf(byte[] data) {
        try {
            return Integer.parseInt(new String(data, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private Mono<Void> deletePaths(List<String> paths) {
        return Flux.fromIterable(new ArrayList<>(paths))
                .concatMap(p -> Mono.fromCompletionStage(() -> async.delete().forPath(p)).onErrorResume(e -> Mono.empty()))
                .then();
    }

    private Mono<Boolean> deleteAll(String name, List<String> owners) {
        return children(name).flatMap(children -> {
            List<String> paths = new ArrayList<>();
            for (String o : owners) {
                ZNodeNames.Child c = find(children, o);
                if (c != null) {
                    paths.add(path(name) + "/" + c.node());
                }
            }
            return deletePaths(paths).thenReturn(!paths.isEmpty());
        });
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch).concatMap(r -> children(r.lock().name())
                        .flatMap(children -> {
                            ZNodeNames.Child c = find(children, r.lock().owner());
                            return c == null ? Mono.just(RenewOutcome.notHeld())
                                    : stat(r.lock().name(), c).map(s -> s.getCzxid() == r.lock().token()
                                            ? RenewOutcome.renewed(ttl(r.leaseTime())) : RenewOutcome.notHeld())
                                    .defaultIfEmpty(RenewOutcome.notHeld());
                        })
                        .onErrorMap(e -> ZooKeeperErrors.map(r.lock().name(), "semaphore renewal", e)))
                .collectList();
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> deleteAll(name, List.of(owner))).onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore release", e));
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        Duration estimate = Duration.ofMillis(Math.max(0, client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()));
        return Mono.defer(() -> children(name))
                .flatMapMany(children -> Flux.range(0, children.size()).map(i -> Map.entry(i, children.get(i))))
                .concatMap(e -> {
                    ZNodeNames.Child c = e.getValue();
                    Stat stat = new Stat();
                    // a node holds when fewer than its N nodes are below it (a deleted lower node only
                    // moves it down: the listing's rank is an upper bound of the node's)
                    return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(path(name) + "/" + c.node()))
                            .filter(data -> e.getKey() < permitsOf(data))
                            .map(data -> new Holder(c.owner(), stat.getCzxid(), estimate))
                            .onErrorResume(x -> ZooKeeperErrors.code(x) == KeeperException.Code.NONODE, x -> Mono.empty());
                })
                .collectList()
                .onErrorMap(e -> ZooKeeperErrors.map(name, "semaphore read", e));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return ChildrenEvents.of(async, path(name), name);
    }

    /** @return a {@code Mono} that closes the Curator client when this store owns it (on a bounded-elastic thread) */
    @Override
    public Mono<Void> close() {
        return ownsClient ? Mono.<Void>fromRunnable(client::close).subscribeOn(Schedulers.boundedElastic()) : Mono.empty();
    }

    @Override
    public String toString() {
        return "ZooKeeperSemaphoreStore{" + root + "}";
    }
}
