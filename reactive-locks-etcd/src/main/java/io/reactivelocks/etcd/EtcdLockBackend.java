package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link LockBackend} on etcd v3 through jetcd: KV, Lease and Watch, the recipe of Go's
 * {@code concurrency.Mutex} — not etcd's Lock RPC, which cannot be cancelled cleanly.
 *
 * <h2>Session</h2>
 * One etcd lease per backend, granted lazily by the first acquire and kept alive by one
 * keep-alive every interval (TTL/3), however many locks it carries: renewal cost does not grow
 * with the number of held locks ({@link RenewalMode#SESSION}). Each confirmed keep-alive is a
 * renewal of every held lock, timed from when its request was sent. Losing the lease (etcd says
 * it expired or was revoked, or no keep-alive was confirmed for a whole TTL) ends every hold
 * stream of the backend at once; the next acquire grants a new lease. One watch of deletions under
 * the backend's prefix, opened when a lock has been held for {@link #HELD_KEY_WATCH_DELAY} and kept
 * while any is (an idle stream, no round trips; closed after {@link HeldKeyWatch#IDLE_CLOSE} with no
 * held key), watches every held key ({@link HeldKeyWatch}): a key deleted behind the client's back —
 * by an operator, by a revoke seen before the next keep-alive — ends that hold stream at once, or,
 * within the first {@code HELD_KEY_WATCH_DELAY} of the hold, when that delay ends.
 *
 * <h2>Recipe</h2>
 * Keys are {@code <prefix>/<base64url(name)>/<session lease hex>-<slot>}, attached to the session
 * lease, value = the owner id: each owner takes the lowest slot of the name that no other owner of
 * the backend has reserved, so acquiring and releasing a name over and over reuses one key instead
 * of leaving a deleted one behind each time ({@link LockSlots}: etcd keeps deleted keys in its index
 * until a compaction, and every read of the name's range visits them). To acquire:
 * <ol>
 *   <li>one transaction: if the owner's key does not exist ({@code create_revision == 0}), put it
 *       with the session lease, else read it (a retried request finds its own key: idempotent);
 *       in both branches read the key with the lowest create revision under the name;</li>
 *   <li>if that is our key, the lock is ours: the fencing token is our key's create revision;</li>
 *   <li>otherwise, when the caller waits, answer {@link Attempt.Queued}: the turn reads the key
 *       just before ours (the highest create revision below ours) and the lowest key, and waits
 *       only for the deletion of the key before ours, from the revision of that read on (nothing
 *       can slip between the read and the watch); then it looks again — a waiter in the middle that
 *       gave up only makes us wait on the next one — until no key is before ours. One release wakes
 *       one waiter: no herd. While it waits, our own key is watched like a held one
 *       ({@link HeldKeyWatch}): deleted behind our back, the wait fails (transient) instead of being
 *       granted. The look again is skipped when the deleted key is known to have been the lowest at
 *       some revision (it was the lowest in our read, or this backend granted it) and the deletion
 *       was reported by that same watch of held keys, which then says whether our key still stood at
 *       it ({@link HeldKeyWatch#predecessorGone}: one stream, in revision order): no key before it
 *       can exist any more and our read found none between it and ours, so its deletion makes ours
 *       the lowest — a handoff between owners of one backend is the release's delete alone. Until
 *       that watch has caught up (etcd serves a watch from a past revision every 100 ms) the waiter
 *       also watches the key before ours itself, and on that watch's event looks again unless the
 *       shared watch agrees within {@link EtcdLockQueue#IN_ORDER_GRACE};</li>
 *   <li>when the caller does not wait ({@code tryAcquire}), our key is deleted again and the
 *       answer is {@link Attempt.Busy} with the holder;</li>
 *   <li>before answering {@link Attempt.Granted}, the session lease must be known alive at and
 *       after the read that found us first (Jepsen's etcd finding, etcd issue #11456: a
 *       transaction can be served on a lease that expired but is not revoked yet). A keep-alive
 *       confirmed with send time {@code s} proves the lease — and so our key, which only the
 *       lease's end or our own release removes — alive until at least {@code s + TTL} (etcd
 *       refuses to renew an expired lease and restarts the TTL on receipt). So the grant's validity
 *       starts ({@link Attempt.Granted#validFromNanos()}) at the latest confirmation's send time when
 *       that one is recent (within the keep-alive interval, at most TTL/2: no request); a grant
 *       answered after {@code s + TTL} minus the drift allowance is refused by the engine as arrived
 *       after its validity, so a transaction served on an expired lease is never handed out.
 *       Without a recent confirmation, a keep-alive sent after the grant confirms it, shared by
 *       every grant that asked before it went out ({@link EtcdSession#confirm}).</li>
 * </ol>
 *
 * <h2>Why it is correct</h2>
 * <b>Exclusion:</b> etcd is linearizable; keys only get larger create revisions over time, so
 * the lowest key under a name is a total order of turns, and a key stops being lowest only when
 * deleted. A holder's key is deleted by its own release (after the engine stopped treating it as
 * held) or by the end of its lease, which happens no earlier than send time of its last confirmed
 * keep-alive + TTL — while the holder's deadline is that send time + TTL minus a drift
 * allowance, so its hold stream has ended before any successor can find itself lowest.
 * <b>Tokens:</b> the token is the create revision of the owner's key: etcd's revision is global
 * and strictly increasing across every key and every restart (it is persisted in the raft log),
 * and a successor's key was created after the predecessor's — its token is larger.
 * <b>Cancellation:</b> a waiter that gives up is released by the engine: its key is deleted,
 * which wakes only its successor, which watches the next key before it.
 * <b>Reused keys:</b> a slot is handed to another owner only once its key is known gone and no
 * acquire transaction of its owner is left in the driver, so every key in an owner's slot is its
 * own: a release is one plain delete. Every other delete (a retry, a clean-up, a release racing its
 * owner's transaction) is guarded by the create revision the key was put with, so a late one cannot
 * remove the next generation of the key (the next owner in its slot, whose create revision is
 * larger); a release whose plain delete went unanswered retires its slot ({@link LockSlots}).
 * <b>Abandoned requests:</b> jetcd does not recall a transaction whose caller gave up (the
 * engine's request timeout while etcd was down): it waits in the gRPC channel and runs when etcd
 * answers again, putting the owner's key on the session lease, which outlives the outage. The
 * backend follows every acquire transaction to its end in the driver; a release asked while one
 * was still there deletes the key again once it settled, retrying until etcd confirms.
 * <b>Outages:</b> while etcd is unreachable the jetcd client's gRPC channel would reconnect only
 * on gRPC's growing backoff (up to 2 minutes); the backend cuts it short every
 * {@link EtcdLockOptions#reconnectInterval()} ({@link ChannelReconnect}), so a client connected
 * before an outage resumes about that soon after etcd is back.
 *
 * <p>Names are data: base64url makes any string one key segment. The backend never closes a
 * {@link Client} it was given; {@link #close()} revokes the session lease (deleting whatever
 * keys are left on it) and closes only a client handed to it to own (a session over
 * {@link EtcdLocks#connect(EtcdConnectionOptions, EtcdLockOptions)} closes its own client itself).
 *
 * <p>This class is the SPI's face; the work is done, one job each, by {@link EtcdLockQueue} (the
 * recipe: transactions, the predecessor wait, release), {@link SessionLeases} (the backend's one
 * session lease and the keys granted on it), {@link EtcdSession} (its keep-alives),
 * {@link HeldKeyWatch} (one prefix watch for every held key), {@link AbandonedTransactions} (acquire
 * transactions followed to their end), {@link ChannelReconnect} (reconnecting soon after an outage)
 * and {@link LockKeys} (the deletes they share).
 */
public final class EtcdLockBackend implements LockBackend {

    /** How long a failed watch waits before it looks again (never a spin on a failing watch). */
    static final Duration WATCH_RETRY = Duration.ofMillis(100);
    /**
     * How long a held key goes unwatched after its grant. The backend's deletions watch sends an
     * event for every deletion under its prefix while it is open — each release of every lock,
     * ours included; registering a key only once it has been held this long lets a backend whose
     * locks are held briefly keep the watch closed ({@link HeldKeyWatch#IDLE_CLOSE}), at no cost to
     * what a hold learns: a key registered later is watched from its own create revision on (or
     * read once), so a deletion in the meantime ends its hold when it registers.
     */
    static final Duration HELD_KEY_WATCH_DELAY = Duration.ofMillis(250);

    private final Client client;
    private final boolean ownsClient;
    private final EtcdLockOptions options;
    private final EtcdKeys keys;
    private final KV kv;
    private final Watch watch;
    private final SessionLeases sessions;
    private final AbandonedTransactions txns;
    private final EtcdLockQueue queue;
    private final HeldKeyWatch heldKeys;
    private volatile Duration heldKeyWatchDelay = HELD_KEY_WATCH_DELAY;
    /** The wait of each grant before its key is watched: one timer for all of them. */
    private final DelayLine heldKeyDelay;
    private final ChannelReconnect reconnect;
    private final Mono<Void> close;

    private EtcdLockBackend(Client client, boolean ownsClient, EtcdLockOptions options) {
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.options = Objects.requireNonNull(options, "options");
        this.keys = new EtcdKeys(options.prefix());
        this.kv = client.getKVClient();
        this.watch = client.getWatchClient();
        LockKeys requests = new LockKeys(kv);
        LockSlots slots = new LockSlots();
        this.sessions = new SessionLeases(client.getLeaseClient(), options);
        this.txns = new AbandonedTransactions(slots, requests, options, sessions::isClosed);
        this.heldKeys = new HeldKeyWatch(kv, watch, keys, options);
        this.heldKeyDelay = new DelayLine(options.scheduler(), () -> heldKeyWatchDelay);
        this.queue = new EtcdLockQueue(kv, watch, keys, slots, requests, sessions, txns, options, heldKeys);
        this.reconnect = new ChannelReconnect(client, options.reconnectInterval(), options.scheduler());
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * @param client  the application's jetcd client (not closed by the backend)
     * @param options prefix and session settings
     * @return a backend; nothing is sent to etcd before the first operation is subscribed
     */
    public static EtcdLockBackend create(Client client, EtcdLockOptions options) {
        return new EtcdLockBackend(client, false, options);
    }

    /**
     * @param client  a jetcd client the backend takes over: {@link #close()} closes it
     * @param options prefix and session settings
     * @return a backend owning {@code client}
     */
    static EtcdLockBackend owning(Client client, EtcdLockOptions options) {
        return new EtcdLockBackend(client, true, options);
    }

    /** @return the settings of this backend */
    public EtcdLockOptions options() {
        return options;
    }

    @Override
    public String name() {
        return "etcd";
    }

    @Override
    public RenewalMode renewalMode() {
        return RenewalMode.SESSION;
    }


    // ---------------------------------------------------------------- grant, renewal, release

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            reconnect.start();
            return queue.tryGrant(request);
        });
    }

    /**
     * The session's keep-alive confirmations, for as long as the session lives <i>and</i> the
     * owner's key exists: the backend's one prefix watch ({@link HeldKeyWatch}) ends the stream
     * when the key is deleted by anyone else (an operator, a forged release) — the session alone
     * would not notice. The key is registered with that watch {@link #HELD_KEY_WATCH_DELAY} after
     * the grant (a deletion before then ends the stream at that moment).
     */
    /** @return the backend's watch of held keys (for tests) */
    HeldKeyWatch heldKeys() {
        return heldKeys;
    }

    /** Sets how long a held key goes unwatched after its grant (for tests; {@link #HELD_KEY_WATCH_DELAY} otherwise). */
    void heldKeyWatchDelay(Duration delay) {
        this.heldKeyWatchDelay = Objects.requireNonNull(delay, "delay");
    }

    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return Flux.defer(() -> {
            EtcdSession s = sessions.grantedOn(EtcdKeys.heldKey(lease.name(), lease.owner()));
            LockSlots.At at = queue.keyOf(lease.name(), lease.owner());
            if (s == null || at == null) {
                return Flux.empty();
            }
            // registered after a short while: a lock held briefly costs no watch event (see HELD_KEY_WATCH_DELAY)
            return s.renewals(clock).takeUntilOther(heldKeyDelay.after().then(heldKeys.keyGone(at.key(), lease.token())));
        });
    }

    /**
     * Not used by the engine (this backend renews by session); answers whether each owner's key
     * still exists on a live session lease, confirming that lease with one keep-alive.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch)
                .concatMap(r -> {
                    LockSlots.At at = queue.keyOf(r.lock().name(), r.lock().owner());
                    if (at == null) { // no key of this owner: not held here
                        return Mono.just(RenewOutcome.notHeld());
                    }
                    return Mono.fromFuture(() -> kv.get(at.key()))
                            .flatMap(g -> {
                                EtcdSession s = sessions.current();
                                if (g.getKvs().isEmpty() || s == null || g.getKvs().get(0).getLease() != s.leaseId
                                        || g.getKvs().get(0).getCreateRevision() != r.lock().token()
                                        || !r.lock().owner().equals(EtcdKeys.ownerOf(g.getKvs().get(0).getValue()))) {
                                    return Mono.just(RenewOutcome.notHeld());
                                }
                                return s.confirm(LockClock.system()).map(c -> RenewOutcome.renewed(c.ttl()));
                            });
                })
                .collectList()
                .onErrorMap(e -> EtcdErrors.map(null, "renewal", e));
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return queue.release(name, owner);
    }

    // ---------------------------------------------------------------- inspect, events, payload

    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.fromRunnable(reconnect::start).then(Mono.fromFuture(() -> kv.get(keys.lock(name), EtcdLockQueue.LOWEST))
                .flatMap(r -> r.getKvs().isEmpty() ? Mono.<Holder>empty() : Mono.just(EtcdKeys.holder(r.getKvs().get(0)))))
                .onErrorMap(e -> EtcdErrors.map(name, "inspect", e));
    }

    /**
     * The keys under the name (one count-only read) less the holder's: etcd's lock is a queue, every
     * waiter has its key there in line.
     */
    @Override
    public Mono<Integer> waiting(String name) {
        return Mono.fromRunnable(reconnect::start).then(Mono.fromFuture(() -> kv.get(keys.lock(name),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build())))
                .map(r -> (int) Math.max(0, r.getCount() - 1))
                .onErrorMap(e -> EtcdErrors.map(name, "inspect", e));
    }

    /**
     * A revocation request: a put of the name's revocation key {@code <prefix>/<name>}
     * ({@link EtcdKeys#revocation}: outside the range of the name's owner keys, so the queue, the
     * inspection, the waiting count and the admin's listing never see it), valued owner and reason,
     * on a lease of its own ({@value EtcdRevocations#TTL_SECONDS} s) that is revoked right after the put:
     * the watch of {@link #events} sees the put, and nothing is left — the lease's end deletes the
     * key, by itself when the revoke does not get through. Three requests (lease grant, put, lease
     * revoke); concurrent requests for one name each put the key on their own lease and each watch
     * sees every put.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> {
            reconnect.start();
            return EtcdRevocations.request(client, keys.revocation(name), owner, reason);
        }).onErrorMap(e -> EtcdErrors.map(name, "revocation request", e));
    }

    /**
     * A watch on the name's key range, and one on its revocation key ({@link #revoke}).
     * {@link LockEvent.Subscribed} when etcd confirmed both watches (again after jetcd re-created
     * either following a connection loss: it resumes from the last revision seen, so nothing is
     * missed); a new key is reported as {@link LockEvent.Acquired} and a deleted key as
     * {@link LockEvent.Released} — whether it was the holder's or a waiter's (consumers re-read the
     * holder: the engine does); a put of the revocation key as {@link LockEvent.Revoked} (a request
     * put before the stream was subscribed is not seen: requests are not stored). Transient
     * watch errors are left to jetcd, which re-creates the watch; a permanent one ends the stream
     * with a {@link LockBackendException}.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.create(sink -> {
            reconnect.start();
            // Subscribed once both watches are live (each is a stream of its own), then again on each re-creation
            boolean[] live = new boolean[2]; // guarded by itself: range, revocations
            Watch.Watcher revocations = EtcdRevocations.watch(watch, name, keys.revocation(name), sink, () -> {
                if (EtcdRevocations.created(live, 1)) {
                    sink.next(new LockEvent.Subscribed(name));
                }
            });
            // the previous value with each deletion: the owner is in the value, and a deletion has none
            WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).withPrevKV(true).build();
            Watch.Watcher w = watch.watch(keys.lock(name), option, Watch.listener(
                    response -> {
                        if (response.isCreatedNotify()) {
                            if (EtcdRevocations.created(live, 0)) {
                                sink.next(new LockEvent.Subscribed(name));
                            }
                            return;
                        }
                        for (WatchEvent e : response.getEvents()) {
                            KeyValue kv = e.getKeyValue();
                            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                                sink.next(new LockEvent.Released(name, EtcdKeys.ownerOf(e.getPrevKV().getValue()), false));
                            } else if (e.getEventType() == WatchEvent.EventType.PUT) {
                                // a new key (version 1) or a payload update of an existing one
                                sink.next(new LockEvent.Acquired(name, EtcdKeys.ownerOf(kv.getValue()), kv.getCreateRevision()));
                            }
                        }
                    },
                    error -> {
                        if (!EtcdErrors.isTransient(error)) {
                            sink.error(EtcdErrors.map(name, "watch", error));
                        }
                    },
                    sink::complete));
            sink.onDispose(() -> {
                w.close();
                revocations.close();
            });
        });
    }

    /**
     * Writes the payload into the held key of {@code lock.owner()} (as etcd's Proclaim does),
     * only while that key is still the one granted with {@code lock.token()} (its create
     * revision), keeping it on its session lease. The watch of {@link #events} reports the put.
     *
     * @return {@code true} when written; {@code false} when the key is gone or is not one this
     *         backend granted on a live session
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> {
            EtcdSession s = sessions.grantedOn(EtcdKeys.heldKey(lock.name(), lock.owner()));
            LockSlots.At at = queue.keyOf(lock.name(), lock.owner());
            if (s == null || s.isOver() || at == null) {
                return Mono.just(false);
            }
            ByteSequence key = at.key();
            return Mono.fromFuture(() -> kv.txn()
                            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(lock.token())))
                            .Then(Op.put(key, EtcdKeys.value(lock.owner(), payload), PutOption.builder().withLeaseId(s.leaseId).build()))
                            .commit())
                    .map(TxnResponse::isSucceeded)
                    .onErrorResume(EtcdErrors::isLeaseNotFound, e -> {
                        s.lose("etcd says the session lease " + Long.toHexString(s.leaseId) + " is gone");
                        return Mono.just(false);
                    })
                    .onErrorMap(e -> EtcdErrors.map(lock.name(), "payload update", e));
        });
    }

    // ---------------------------------------------------------------- close

    @Override
    public Mono<Void> close() {
        return close;
    }

    private Mono<Void> doClose() {
        EtcdSession s = sessions.close();
        txns.cancelRetries();
        reconnect.dispose();
        heldKeys.close();
        heldKeyDelay.close();
        Mono<Void> end = s == null ? Mono.empty() : s.close();
        return end.then(Mono.fromRunnable(() -> {
            if (ownsClient) {
                client.close();
            }
        }).subscribeOn(Schedulers.boundedElastic())).then();
    }

    @Override
    public String toString() {
        return "EtcdLockBackend{prefix='" + options.prefix() + "'}";
    }
}
