package io.reactivelocks.etcd;

import io.etcd.jetcd.api.LeaseGrantResponse;
import io.etcd.jetcd.api.LeaseRevokeRequest;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;

/**
 * A test double on one backend's jetcd client: a gRPC interceptor that sees the messages the
 * client exchanges with etcd, so that tests know the backend's session leases and who was woken
 * without asking the backend. It records the leases granted to the client (each
 * {@code LeaseGrant} answer), the leases it revoked (each {@code LeaseRevoke} sent: the backend
 * revokes its session lease, best effort, whenever the session ends, lost or closed), the events
 * its watches received and the read-only transactions it sent (a queued owner looking at its place
 * in the line).
 */
final class EtcdCalls implements ClientInterceptor {

    private final List<Long> granted = new CopyOnWriteArrayList<>();
    private final List<Long> revoked = new CopyOnWriteArrayList<>();
    private final Map<Long, CompletableFuture<Void>> revokes = new ConcurrentHashMap<>();
    private final AtomicLong watchEvents = new AtomicLong();
    private final AtomicLong readTransactions = new AtomicLong();

    @Override
    public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<A> listener, Metadata headers) {
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onMessage(A message) {
                        if (message instanceof WatchResponse w) {
                            watchEvents.addAndGet(w.getEventsCount());
                        }
                        if (message instanceof LeaseGrantResponse g) {
                            granted.add(g.getID());
                        }
                        super.onMessage(message);
                    }
                }, headers);
            }

            @Override
            public void sendMessage(Q message) {
                if (message instanceof TxnRequest t && t.getCompareCount() == 0
                        && t.getSuccessList().stream().allMatch(op -> op.hasRequestRange())) {
                    readTransactions.incrementAndGet();
                }
                if (message instanceof LeaseRevokeRequest r) {
                    revoked.add(r.getID());
                    revokes.computeIfAbsent(r.getID(), id -> new CompletableFuture<>()).complete(null);
                }
                super.sendMessage(message);
            }
        };
    }

    /** @return the events received on every watch of the client so far */
    long watchEvents() {
        return watchEvents.get();
    }

    /** @return the ids of the leases granted to the client so far, in order */
    List<Long> granted() {
        return List.copyOf(granted);
    }

    /** @return the ids of the leases the client revoked so far, in order */
    List<Long> revoked() {
        return List.copyOf(revoked);
    }

    /** @return the lease granted last, unless the client revoked it since (the backend's live session lease) */
    OptionalLong liveLease() {
        List<Long> g = granted();
        if (g.isEmpty()) {
            return OptionalLong.empty();
        }
        long last = g.get(g.size() - 1);
        return revoked.contains(last) ? OptionalLong.empty() : OptionalLong.of(last);
    }

    /** @return completes when the client revokes its live lease (its session ended); empty at once without one */
    Mono<Void> liveLeaseRevoked() {
        OptionalLong live = liveLease();
        return live.isEmpty() ? Mono.empty()
                : Mono.fromFuture(() -> revokes.computeIfAbsent(live.getAsLong(), id -> new CompletableFuture<>()));
    }

    /** @return how many transactions of reads only (no compare) the client sent so far */
    long readTransactions() {
        return readTransactions.get();
    }

}
