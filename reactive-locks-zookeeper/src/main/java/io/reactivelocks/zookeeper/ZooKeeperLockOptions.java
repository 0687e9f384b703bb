package io.reactivelocks.zookeeper;

import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.common.PathUtils;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Immutable settings of a {@link ZooKeeperLockBackend}: where lock nodes live, who may touch
 * them, and how often a held lock's node is confirmed. Build with {@link #builder()}, change a
 * copy with {@link #mutate()}.
 *
 * <p>Defaults: root {@code /reactive-locks}, ACL {@code OPEN_ACL_UNSAFE} (anyone may do
 * anything: set {@link Builder#digestAcl(String, String)} in production), confirmations every
 * negotiated session timeout / 3, internal request timeout 5 s, {@link Schedulers#parallel()}
 * for confirmation timers.
 */
public final class ZooKeeperLockOptions {

    private static final ZooKeeperLockOptions DEFAULTS = builder().build();

    private final String root;
    private final List<ACL> acl;
    private final @Nullable Duration confirmationInterval;
    private final Duration requestTimeout;
    private final Scheduler scheduler;

    private ZooKeeperLockOptions(Builder b) {
        this.root = b.root;
        this.acl = b.acl;
        this.confirmationInterval = b.confirmationInterval;
        this.requestTimeout = b.requestTimeout;
        this.scheduler = b.scheduler;
    }

    /** @return the defaults described in the class documentation */
    public static ZooKeeperLockOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options */
    public Builder mutate() {
        Builder b = new Builder();
        b.root = root;
        b.acl = acl;
        b.confirmationInterval = confirmationInterval;
        b.requestTimeout = requestTimeout;
        b.scheduler = scheduler;
        return b;
    }

    /** @return the path under which every lock node lives, e.g. {@code /reactive-locks} */
    public String root() {
        return root;
    }

    /** @return the ACL set on the root, on every lock's node and on every owner's node */
    public List<ACL> acl() {
        return acl;
    }

    /** @return how often a held lock's node is confirmed; {@code null} = negotiated session timeout / 3 */
    public @Nullable Duration confirmationInterval() {
        return confirmationInterval;
    }

    /** @return the bound on requests the backend sends on its own (confirmations, clean-up on close) */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return the scheduler of the confirmation timers */
    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public String toString() {
        return "ZooKeeperLockOptions{root=" + root + ", acl=" + acl.size() + " entries, confirmationInterval="
                + (confirmationInterval == null ? "sessionTimeout/3" : confirmationInterval)
                + ", requestTimeout=" + requestTimeout + "}";
    }

    /** Mutable builder of {@link ZooKeeperLockOptions}; not thread-safe. */
    public static final class Builder {
        private String root = "/reactive-locks";
        private List<ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
        private @Nullable Duration confirmationInterval;
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Scheduler scheduler = Schedulers.parallel();

        private Builder() {
        }

        /**
         * @param root an absolute ZooKeeper path without a trailing {@code /}, not {@code /}
         *             itself and not under {@code /zookeeper}
         * @return this builder
         * @throws IllegalArgumentException naming {@code root} when it is not such a path
         */
        public Builder root(String root) {
            Objects.requireNonNull(root, "root");
            try {
                PathUtils.validatePath(root);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("root must be a valid ZooKeeper path: " + e.getMessage(), e);
            }
            if (root.equals("/") || root.equals("/zookeeper") || root.startsWith("/zookeeper/")) {
                throw new IllegalArgumentException("root must not be / or under /zookeeper, was " + root);
            }
            this.root = root;
            return this;
        }

        /**
         * Sets the ACL of every node the backend creates. Remember that ZooKeeper checks a
         * delete against the <em>parent's</em> ACL: whoever may delete children of a lock's node
         * may delete any contender's node, so every contender of a lock must share one identity.
         *
         * @param acl a non-empty ACL list
         * @return this builder
         */
        public Builder acl(List<ACL> acl) {
            Objects.requireNonNull(acl, "acl");
            if (acl.isEmpty()) {
                throw new IllegalArgumentException("acl must not be empty");
            }
            this.acl = List.copyOf(acl);
            return this;
        }

        /**
         * ACL for a digest identity: everything for {@code user}, read for anyone (so that
         * monitoring can list holders). Pair it with the same credentials on the Curator client:
         * {@code CuratorFrameworkFactory.builder().authorization("digest", "user:password".getBytes(UTF_8))}.
         * Clients with other credentials then cannot create, delete or change lock nodes.
         *
         * @param user     the digest user; not null, no {@code :}
         * @param password the digest password; not null
         * @return this builder
         */
        public Builder digestAcl(String user, String password) {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
            if (user.isEmpty() || user.indexOf(':') >= 0) {
                throw new IllegalArgumentException("user must be non-empty and contain no ':', was '" + user + "'");
            }
            String digest;
            try {
                digest = DigestAuthenticationProvider.generateDigest(user + ":" + password);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("no SHA1 for ZooKeeper's digest scheme", e);
            }
            return acl(List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digest)),
                    new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
        }

        /**
         * @param interval how often a held lock's node is confirmed (each confirmation extends
         *                 its lease); positive, or {@code null} for negotiated session timeout / 3
         * @return this builder
         */
        public Builder confirmationInterval(@Nullable Duration interval) {
            this.confirmationInterval = interval == null ? null : positive(interval, "confirmationInterval");
            return this;
        }

        /**
         * @param timeout bound on the requests the backend sends on its own; positive
         * @return this builder
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * @param scheduler scheduler of the confirmation timers; not null
         * @return this builder
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** @return the options */
        public ZooKeeperLockOptions build() {
            return new ZooKeeperLockOptions(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
