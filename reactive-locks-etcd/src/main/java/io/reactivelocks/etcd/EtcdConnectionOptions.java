package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.netty.handler.ssl.SslContext;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * Immutable settings for connecting to etcd — endpoints, user/password authentication and TLS —
 * turned into a jetcd {@link ClientBuilder} ({@link #clientBuilder()}) or a {@link Client}
 * ({@link #connect()}). Use it with
 * {@link EtcdLocks#connect(EtcdConnectionOptions, EtcdLockOptions)}, or
 * take the builder and add jetcd settings of your own.
 *
 * <pre>{@code
 * EtcdConnectionOptions etcd = EtcdConnectionOptions.builder()
 *         .endpoints("https://etcd-1:2379", "https://etcd-2:2379")
 *         .user("locks", secret)
 *         .trustCertificates(Path.of("/etc/etcd/ca.pem"))
 *         .clientCertificate(Path.of("/etc/etcd/client.pem"), Path.of("/etc/etcd/client-key.pem"))
 *         .build();
 * }</pre>
 *
 * <p>TLS is on when trust certificates, a client certificate or an {@link SslContext} are set;
 * the certificate files are read when the client is built (at start-up, not on an event loop).
 */
public final class EtcdConnectionOptions {

    private final List<String> endpoints;
    private final @Nullable String user;
    private final @Nullable String password;
    private final Path trustCertificates;
    private final Path clientCertificate;
    private final Path clientKey;
    private final SslContext sslContext;
    private final String authority;
    private final Duration connectTimeout;

    private EtcdConnectionOptions(Builder b) {
        this.endpoints = List.copyOf(b.endpoints);
        this.user = b.user;
        this.password = b.password;
        this.trustCertificates = b.trustCertificates;
        this.clientCertificate = b.clientCertificate;
        this.clientKey = b.clientKey;
        this.sslContext = b.sslContext;
        this.authority = b.authority;
        this.connectTimeout = b.connectTimeout;
    }

    /** @return a builder with no endpoint yet, no authentication, no TLS, connect timeout 5 s */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these options */
    public Builder mutate() {
        Builder b = new Builder();
        b.endpoints.addAll(endpoints);
        b.user = user;
        b.password = password;
        b.trustCertificates = trustCertificates;
        b.clientCertificate = clientCertificate;
        b.clientKey = clientKey;
        b.sslContext = sslContext;
        b.authority = authority;
        b.connectTimeout = connectTimeout;
        return b;
    }

    /** @return the client endpoints, e.g. {@code http://127.0.0.1:2379} */
    public List<String> endpoints() {
        return endpoints;
    }

    /** @return the user name, or {@code null} without authentication */
    public @Nullable String user() {
        return user;
    }

    /** @return whether TLS is configured */
    public boolean isTls() {
        return sslContext != null || trustCertificates != null || clientCertificate != null;
    }

    /**
     * @return a jetcd builder with these settings (reads the certificate files, if any)
     * @throws UncheckedIOException when a certificate or key file cannot be read
     */
    public ClientBuilder clientBuilder() {
        ClientBuilder b = Client.builder().endpoints(endpoints.toArray(new String[0]));
        if (user != null) {
            b.user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
        if (authority != null) {
            b.authority(authority);
        }
        if (connectTimeout != null) {
            b.connectTimeout(connectTimeout);
        }
        if (sslContext != null) {
            b.sslContext(sslContext);
        } else if (trustCertificates != null || clientCertificate != null) {
            try {
                b.sslContext(ssl -> {
                    if (trustCertificates != null) {
                        ssl.trustManager(trustCertificates.toFile());
                    }
                    if (clientCertificate != null) {
                        ssl.keyManager(clientCertificate.toFile(), clientKey.toFile());
                    }
                });
            } catch (SSLException e) {
                throw new UncheckedIOException("could not set up TLS for etcd from " + this, e);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("could not read the TLS files for etcd of " + this + ": " + e.getMessage(), e);
            }
        }
        return b;
    }

    /**
     * @return a new jetcd client (it connects lazily, on the first request); close it when done
     * @throws UncheckedIOException when a certificate or key file cannot be read
     */
    public Client connect() {
        return clientBuilder().build();
    }

    @Override
    public String toString() {
        return "EtcdConnectionOptions{endpoints=" + endpoints
                + (user == null ? "" : ", user='" + user + "', password=***")
                + (trustCertificates == null ? "" : ", trust=" + trustCertificates)
                + (clientCertificate == null ? "" : ", clientCertificate=" + clientCertificate)
                + (sslContext == null ? "" : ", sslContext")
                + (authority == null ? "" : ", authority=" + authority)
                + ", connectTimeout=" + connectTimeout + "}";
    }

    /** Mutable builder of {@link EtcdConnectionOptions}; not thread-safe. */
    public static final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private @Nullable String user;
        private @Nullable String password;
        private Path trustCertificates;
        private Path clientCertificate;
        private Path clientKey;
        private SslContext sslContext;
        private String authority;
        private Duration connectTimeout = Duration.ofSeconds(5);

        private Builder() {
        }

        /**
         * The etcd members to talk to. For a cluster, list the client URL of every member: jetcd spreads
         * calls over them (gRPC {@code round_robin}) and leaves out a member it cannot reach; any member
         * serves (writes and linearizable reads go through the raft leader), and the session lease that
         * holds every lock of the client lives in the cluster, so it survives a leader change.
         *
         * @param endpoints client URLs, {@code http://host[:port]} or {@code https://host[:port]}
         *                  (port 2379 when omitted); replaces any set before; at least one
         * @return this builder
         * @throws IllegalArgumentException naming {@code endpoints} when an entry is blank, not a
         *         URL, not {@code http}/{@code https}, without a host, or with a port out of range
         */
        public Builder endpoints(String... endpoints) {
            Objects.requireNonNull(endpoints, "endpoints");
            List<String> list = new ArrayList<>();
            for (String e : endpoints) {
                Objects.requireNonNull(e, "endpoints");
                if (e.isBlank()) {
                    throw new IllegalArgumentException("endpoints must not contain a blank entry");
                }
                list.add(checkEndpoint(e.trim()));
            }
            this.endpoints.clear();
            this.endpoints.addAll(list);
            return this;
        }

        /*
         * jetcd takes only the host and port of an endpoint and ignores the rest, scheme included: a
         * typo ("htp://", "localhost:2379" read as scheme "localhost") would surface late, or not at
         * all. Check it here, where the message can name the argument.
         */
        private static String checkEndpoint(String endpoint) {
            URI uri;
            try {
                uri = new URI(endpoint);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("endpoints must be URLs like http://host:2379, '" + endpoint
                        + "' is not one: " + e.getMessage(), e);
            }
            String scheme = uri.getScheme();
            if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                throw new IllegalArgumentException("endpoints must be http:// or https:// URLs like http://host:2379, was '"
                        + endpoint + "'");
            }
            if (uri.getHost() == null || uri.getHost().isEmpty()) {
                throw new IllegalArgumentException("endpoints must name a host (and optionally a port 1-65535) like"
                        + " http://host:2379, was '" + endpoint + "'");
            }
            if (uri.getPort() == 0 || uri.getPort() > 65535) {
                throw new IllegalArgumentException("endpoints must use a port from 1 to 65535, was '" + endpoint + "'");
            }
            return endpoint;
        }

        /**
         * User/password authentication (etcd's {@code Authenticate} RPC; jetcd attaches the token
         * to every call and renews it when etcd says it is stale).
         *
         * @param user     the user name; not empty
         * @param password the password; not null
         * @return this builder
         */
        public Builder user(String user, String password) {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
            if (user.isEmpty()) {
                throw new IllegalArgumentException("user must not be empty");
            }
            this.user = user;
            this.password = password;
            return this;
        }

        /**
         * @param pemFile the CA certificates (PEM) to trust the servers by; turns TLS on
         * @return this builder
         */
        public Builder trustCertificates(Path pemFile) {
            this.trustCertificates = Objects.requireNonNull(pemFile, "trustCertificates");
            return this;
        }

        /**
         * Mutual TLS: the client's certificate chain and its PKCS#8 private key; turns TLS on.
         *
         * @param certificateChain PEM certificate chain
         * @param privateKey       PEM PKCS#8 private key (unencrypted)
         * @return this builder
         */
        public Builder clientCertificate(Path certificateChain, Path privateKey) {
            this.clientCertificate = Objects.requireNonNull(certificateChain, "certificateChain");
            this.clientKey = Objects.requireNonNull(privateKey, "privateKey");
            return this;
        }

        /**
         * @param sslContext a ready client context, built with {@code GrpcSslContexts.forClient()};
         *                   overrides the certificate files
         * @return this builder
         */
        public Builder sslContext(SslContext sslContext) {
            this.sslContext = Objects.requireNonNull(sslContext, "sslContext");
            return this;
        }

        /**
         * @param authority the authority (host name) to verify the servers' certificates against,
         *                  when it differs from the endpoints' host
         * @return this builder
         */
        public Builder authority(String authority) {
            this.authority = Objects.requireNonNull(authority, "authority");
            return this;
        }

        /**
         * @param connectTimeout how long opening a connection may take; positive
         * @return this builder
         */
        public Builder connectTimeout(Duration connectTimeout) {
            Objects.requireNonNull(connectTimeout, "connectTimeout");
            if (connectTimeout.isZero() || connectTimeout.isNegative()) {
                throw new IllegalArgumentException("connectTimeout must be positive, was " + connectTimeout);
            }
            this.connectTimeout = connectTimeout;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException when no endpoint was set, or an endpoint is
         *         {@code https://} but no TLS is configured (jetcd would connect in plain text)
         */
        public EtcdConnectionOptions build() {
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("endpoints must name at least one etcd server");
            }
            boolean tls = sslContext != null || trustCertificates != null || clientCertificate != null;
            for (String e : endpoints) {
                if (!tls && e.regionMatches(true, 0, "https:", 0, 6)) {
                    throw new IllegalArgumentException("endpoints use https:// but no TLS is configured: set"
                            + " trustCertificates, clientCertificate or sslContext (was '" + e + "')");
                }
            }
            return new EtcdConnectionOptions(this);
        }
    }
}
