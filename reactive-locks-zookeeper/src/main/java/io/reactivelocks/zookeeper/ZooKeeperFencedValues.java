package io.reactivelocks.zookeeper;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockNames;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.Fencing;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.x.async.AsyncCuratorFramework;
import org.apache.curator.x.async.api.CreateOption;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Fenced values on ZooKeeper, over the application's Curator client.
 *
 * <p><b>Layout.</b> One persistent node per key, {@code <root>/fenced/n-<base64url(key)>} (the
 * key's segment as for a lock name: only {@code [A-Za-z0-9_-]}, so never a {@code /}): a subtree of its own under the
 * {@linkplain ZooKeeperLockOptions#root() root}, beside the lock nodes ({@code <root>/n-…}), which
 * it never meets. {@code <root>/fenced} and its missing ancestors are created as container nodes
 * with the first key. Every node carries the options' ACL (the parents too: ZooKeeper checks a
 * delete against the parent's ACL) and the key nodes are never removed: a key is application data,
 * and its fence must outlive its value.
 *
 * <p><b>Data.</b> A node's data is the fence, the decimal token of the last admitted write or
 * delete ({@code Long.toString}), then a newline ({@code \n}) and the value in UTF-8 when the key
 * has a value; the fence alone (no newline) is a tombstone, left by a delete. So {@code 42\nhello}
 * is the value {@code hello} at fence 42, {@code 42\n} the empty value, and {@code 42} no value.
 *
 * <p><b>Compare and set.</b> A write or delete reads the node's data and version, compares the
 * token with the fence ({@link Fencing#admits}), and when admitted writes fence and value back with
 * {@code setData().withVersion(version)}, or creates the node when the key has none. A refused
 * token writes nothing. A concurrent writer in between makes the versioned write fail
 * ({@code BadVersion}) or the create find the node ({@code NodeExists}): the request then reads
 * again and compares again, until it is decided or the options'
 * {@linkplain ZooKeeperLockOptions#requestTimeout() request timeout} runs out. Every conflict is
 * another writer's success, so the retries end. A write Curator retried after a connection loss
 * may meet its own write as a conflict; its token is then equal to the fence, so it is admitted
 * again (unless a newer writer came in between) and writes the same data once more.
 *
 * <p>Every method is lazy (its requests are sent on subscribe), never blocks (Curator's
 * asynchronous API), is bounded by the request timeout and errors with a
 * {@link LockBackendException} when ZooKeeper fails or does not answer in time (transient for
 * connection loss and timeouts); cancelling does not recall a request already sent. A value and
 * its fence must fit in ZooKeeper's {@code jute.maxbuffer} (1 MB by default). Thread-safe.
 */
public final class ZooKeeperFencedValues implements FencedValues {

    /** The name of the subtree of fenced values under the root; lock segments all begin with {@code n-}. */
    static final String SUBTREE = "fenced";

    /** Another write came between a round's read and its write: the round is repeated. */
    private static final Conflict CONFLICT = new Conflict();

    private final AsyncCuratorFramework async;
    private final ZooKeeperLockOptions options;
    private final String parent;
    private final List<ACL> acl;
    private volatile boolean closed;

    private ZooKeeperFencedValues(CuratorFramework client, ZooKeeperLockOptions options) {
        this.async = AsyncCuratorFramework.wrap(client);
        this.options = options;
        this.parent = options.root() + "/" + SUBTREE;
        this.acl = options.acl();
    }

    /**
     * Fenced values over {@code client}, under {@code <root>/fenced} of {@code options}. The client
     * stays the application's: it is started here if it was not yet ({@code start()} returns at
     * once), and {@link #close()} leaves it open.
     *
     * @param client  the application's Curator client, not closed
     * @param options the root (values live under {@code <root>/fenced}), the ACL of new nodes and the request timeout
     * @return the fenced values
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the client was closed, or its connect string is malformed
     */
    public static ZooKeeperFencedValues create(CuratorFramework client, ZooKeeperLockOptions options) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(options, "options");
        ZooKeeperLockBackend.checkConnectString(client);
        if (client.getState() == CuratorFrameworkState.STOPPED) {
            throw new IllegalArgumentException("client must not be closed: " + client);
        }
        if (client.getState() == CuratorFrameworkState.LATENT) {
            client.start();
        }
        return new ZooKeeperFencedValues(client, options);
    }

    /** @return the path of {@code key}'s node, {@code <root>/fenced/n-<base64url(key)>} */
    String path(String key) {
        return parent + "/" + ZNodeNames.segment(key);
    }

    /**
     * Writes {@code value} under {@code key} when {@link Fencing#admits} the token against the
     * key's fence (a key without a node admits any token), raising the fence to {@code token}: one
     * read, then one versioned {@code setData} (or a create), again after a conflict.
     *
     * @param key   the key
     * @param token the writer's fencing token
     * @param value the value
     * @return {@code true} when written, {@code false} when refused (nothing written); errors with a
     *         {@link LockBackendException} when ZooKeeper fails or the request timeout runs out, with a
     *         {@link LockClientClosedException} after {@link #close()}
     * @throws NullPointerException     when the key or the value is null
     * @throws IllegalArgumentException when the key is empty or longer than 1024 UTF-8 bytes
     */
    @Override
    public Mono<Boolean> write(String key, long token, String value) {
        LockNames.check(key, "key");
        Objects.requireNonNull(value, "value");
        return run(key, token, value, "fenced write");
    }

    /**
     * Deletes the value of {@code key} when {@link Fencing#admits} the token against the key's
     * fence, raising the fence to {@code token}: the node stays as a tombstone holding the fence
     * alone, so a writer with an older token cannot bring the value back. A key without a node gets
     * a tombstone; a tombstone already at {@code token} is left as it is.
     *
     * @param key   the key
     * @param token the writer's fencing token
     * @return {@code true} when admitted (whether or not there was a value), {@code false} when
     *         refused (nothing written); errors as {@link #write}
     * @throws NullPointerException     when the key is null
     * @throws IllegalArgumentException when the key is empty or longer than 1024 UTF-8 bytes
     */
    @Override
    public Mono<Boolean> delete(String key, long token) {
        LockNames.check(key, "key");
        return run(key, token, null, "fenced delete");
    }

    /**
     * Reads the value of {@code key} and its fence: one {@code getData}.
     *
     * @param key the key
     * @return the value and its fence; empty when the key has no node or a tombstone; errors as {@link #write}
     * @throws NullPointerException     when the key is null
     * @throws IllegalArgumentException when the key is empty or longer than 1024 UTF-8 bytes
     */
    @Override
    public Mono<FencedValue> read(String key) {
        LockNames.check(key, "key");
        return Mono.defer(() -> {
                    if (closed) {
                        return Mono.error(new LockClientClosedException(key));
                    }
                    String path = path(key);
                    return Mono.fromCompletionStage(() -> async.getData().forPath(path))
                            .flatMap(data -> {
                                Stored s = Stored.parse(key, path, data);
                                return s.value() == null ? Mono.<FencedValue>empty() : Mono.just(new FencedValue(s.value(), s.fence()));
                            })
                            .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> Mono.empty());
                })
                .timeout(options.requestTimeout(), options.scheduler())
                .onErrorMap(e -> ZooKeeperErrors.map(key, "fenced read", e));
    }

    /**
     * One decision: rounds of {@link #round} until one is not a conflict, bounded by the request
     * timeout as a whole (its conflicts included). A flat retry, not a recursion: a long run of
     * conflicts does not deepen the stack.
     */
    private Mono<Boolean> run(String key, long token, @Nullable String value, String operation) {
        return Mono.defer(() -> closed ? Mono.<Boolean>error(new LockClientClosedException(key)) : round(key, path(key), token, value))
                .retryWhen(Retry.indefinitely().filter(e -> e == CONFLICT))
                .timeout(options.requestTimeout(), options.scheduler())
                .onErrorMap(e -> ZooKeeperErrors.map(key, operation, e));
    }

    /**
     * Reads the node, decides, and writes at the version read (or creates the node); signals
     * {@link #CONFLICT} when another write came in between.
     */
    private Mono<Boolean> round(String key, String path, long token, @Nullable String value) {
        Stat stat = new Stat();
        return Mono.fromCompletionStage(() -> async.getData().storingStatIn(stat).forPath(path))
                .flatMap(data -> {
                    Stored stored = Stored.parse(key, path, data);
                    if (!Fencing.admits(stored.fence(), token)) {
                        return Mono.just(false);
                    }
                    if (value == null && stored.value() == null && stored.fence() == token) {
                        return Mono.just(true); // a tombstone at this token already: nothing to write
                    }
                    return Mono.fromCompletionStage(() -> async.setData().withVersion(stat.getVersion())
                                    .forPath(path, Stored.encode(token, value)))
                            .thenReturn(true)
                            // written in between (BadVersion), or the node removed by hand (NoNode)
                            .onErrorMap(ZooKeeperFencedValues::isConflict, e -> CONFLICT);
                })
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> create(path, token, value));
    }

    /**
     * Creates the key's node: a node created in between is a conflict; a missing parent is created
     * (then the round is a conflict, and the next one creates the node). Curator's
     * {@code createParentsAsContainers} is not used: it gives the parents the client's ACL provider,
     * not the options' ACL, and whoever may delete children of {@code <root>/fenced} could remove a
     * fence.
     */
    private Mono<Boolean> create(String path, long token, @Nullable String value) {
        return Mono.fromCompletionStage(() -> async.create().withOptions(EnumSet.noneOf(CreateOption.class), CreateMode.PERSISTENT, acl)
                        .forPath(path, Stored.encode(token, value)))
                .thenReturn(true)
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.error(CONFLICT))
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> ensureParent().then(Mono.error(CONFLICT)));
    }

    /**
     * Creates {@code <root>/fenced} as a container node with the options' ACL, and its ancestors
     * first when they are missing too (an ancestor that exists is not created again: the
     * application may not be allowed to create it).
     */
    private Mono<Void> ensureParent() {
        return createContainer(parent).onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NONODE, e -> {
            Mono<Void> chain = Mono.empty();
            int i = 0;
            while ((i = parent.indexOf('/', i + 1)) > 0) {
                String ancestor = parent.substring(0, i);
                chain = chain.then(createContainer(ancestor));
            }
            return chain.then(createContainer(parent));
        });
    }

    private Mono<Void> createContainer(String path) {
        return Mono.fromCompletionStage(() -> async.create().withOptions(EnumSet.noneOf(CreateOption.class), CreateMode.CONTAINER, acl)
                        .forPath(path, new byte[0]))
                .then()
                .onErrorResume(e -> ZooKeeperErrors.code(e) == KeeperException.Code.NODEEXISTS, e -> Mono.empty());
    }

    private static boolean isConflict(Throwable e) {
        KeeperException.Code code = ZooKeeperErrors.code(e);
        return code == KeeperException.Code.BADVERSION || code == KeeperException.Code.NONODE;
    }

    /**
     * Marks these fenced values closed: later calls error with {@link LockClientClosedException}.
     * The Curator client stays open (it is the application's); nodes stay. Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(() -> closed = true);
    }

    @Override
    public String toString() {
        return "ZooKeeperFencedValues{" + parent + "}";
    }

    /**
     * A node's data, parsed: the fence, and the value unless the node is a tombstone.
     *
     * @param fence the highest admitted token
     * @param value the value; {@code null} for a tombstone
     */
    private record Stored(long fence, @Nullable String value) {

        static byte[] encode(long fence, @Nullable String value) {
            return (value == null ? Long.toString(fence) : fence + "\n" + value).getBytes(StandardCharsets.UTF_8);
        }

        static Stored parse(String key, String path, byte[] data) {
            String s = new String(data, StandardCharsets.UTF_8);
            int nl = s.indexOf('\n');
            try {
                return nl < 0 ? new Stored(Long.parseLong(s), null) : new Stored(Long.parseLong(s.substring(0, nl)), s.substring(nl + 1));
            } catch (NumberFormatException e) {
                throw new LockBackendException(key, "zookeeper node " + path + " does not hold a fenced value (expected <fence>[\\n<value>])",
                        e, false);
            }
        }
    }

    /** The signal of {@link #CONFLICT}: never leaves this class, so it has no stack trace. */
    private static final class Conflict extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Conflict() {
            super("the fenced value changed between the read and the write", null, false, false);
        }
    }
}
