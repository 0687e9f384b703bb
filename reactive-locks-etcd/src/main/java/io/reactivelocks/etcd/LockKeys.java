package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;

/**
 * The deletes of owner keys that the queue, the release and the clean-up of abandoned
 * transactions share. Each is lazy (sent on subscribe) and one etcd request.
 */
final class LockKeys {

    private final KV kv;

    LockKeys(KV kv) {
        this.kv = kv;
    }

    /** @return whether a key was deleted */
    Mono<Boolean> deleteKey(ByteSequence key) {
        return Mono.fromFuture(() -> delete(key)).map(d -> d.getDeleted() > 0);
    }

    /** @return the delete of {@code key}, sent now */
    CompletableFuture<DeleteResponse> delete(ByteSequence key) {
        return kv.delete(key, DeleteOption.DEFAULT);
    }

    /** @return whether the key was deleted: only when it is still the one created at {@code createRevision} */
    Mono<Boolean> deleteIfCreated(ByteSequence key, long createRevision) {
        return Mono.fromFuture(() -> kv.txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                        .Then(Op.delete(key, DeleteOption.DEFAULT))
                        .commit())
                .map(TxnResponse::isSucceeded);
    }
}
