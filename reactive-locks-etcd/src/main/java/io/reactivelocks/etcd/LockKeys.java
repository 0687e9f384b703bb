package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * The deletes of owner keys that the queue, the release and the clean-up of abandoned
 * transactions share. Each is lazy (sent on subscribe). All but a release's first are guarded by
 * the create revision the key was put with: keys are reused ({@link LockSlots}), so an unguarded
 * delete sent late could remove the key of the next owner in the same slot; the release's is sent
 * while no later owner can be in the slot, and retires the slot when its answer is lost.
 */
final class LockKeys {

    private final KV kv;

    LockKeys(KV kv) {
        this.kv = kv;
    }

    /**
     * An unguarded delete, for a key that can only be its owner's while it is sent: a release's, with the
     * owner's slot reserved until this delete is answered ({@link AbandonedTransactions#trackedRelease}).
     * One request, no compare: etcd reads no revision for it.
     *
     * @return whether a key was deleted
     */
    Mono<Boolean> delete(ByteSequence key) {
        return Mono.fromFuture(() -> kv.delete(key)).map(r -> r.getDeleted() > 0);
    }

    /** @return whether the key was deleted: only when it is still the one created at {@code createRevision} */
    Mono<Boolean> deleteIfCreated(ByteSequence key, long createRevision) {
        return Mono.fromFuture(() -> kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .commit())
                .map(TxnResponse::isSucceeded);
    }

    /**
     * Deletes the key of {@code owner}: one transaction, deleting the key while it is the one created
     * at {@code createRevision} (0: the key is absent, nothing to delete), else reading it; a key
     * found with another create revision is deleted the same way when its value names {@code owner}
     * (a generation put by a transaction whose answer was not seen), and left alone otherwise.
     *
     * @return whether a key of {@code owner} was deleted; completes once the key is known gone or not the owner's
     */
    Mono<Boolean> deleteOwned(ByteSequence key, String owner, long createRevision) {
        return Mono.fromFuture(() -> kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .Else(Op.get(key, GetOption.DEFAULT))
                        .commit())
                .flatMap(r -> {
                    if (r.isSucceeded()) {
                        return Mono.just(r.getDeleteResponses().get(0).getDeleted() > 0);
                    }
                    List<KeyValue> found = r.getGetResponses().get(0).getKvs();
                    if (found.isEmpty() || !owner.equals(EtcdKeys.ownerOf(found.get(0).getValue()))) {
                        return Mono.just(false);
                    }
                    return deleteOwned(key, owner, found.get(0).getCreateRevision());
                });
    }
}
