package io.reactivelocks.docs;

import io.reactivelocks.LockClient;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

// tag::service[]
@Service
public class Orders {
    private final LockClient locks;                                // the starter's bean, on the store the application has

    public Orders(LockClient locks) {
        this.locks = locks;
    }

    public Mono<String> charge(String order) {
        return locks.withLock("order:" + order, lease -> payments(order, lease.token()));
    }

    private Mono<String> payments(String order, long token) {     // your work, fenced with the token
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
// end::service[]
