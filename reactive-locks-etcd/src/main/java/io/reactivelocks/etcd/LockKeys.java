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
 * transactions share. Each is lazy (sent on subscribe) and guarded by the create revision the key
 * was put with: keys are reused ({@link LockSlots}), so an unguarded delete sent late could remove
 * the key of the next owner in the same slot.
 */
final class LockKeys {

    private final KV kv;

    LockKeys(KV kv) {
        this.kv = kv;
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
