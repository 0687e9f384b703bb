package io.reactivelocks.spring.boot;

import io.reactivelocks.spring.boot.ReactiveLocksProperties.Backend;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when {@code reactive-locks.backend} is {@code auto} (or unset) or names this condition's backend. */
abstract class OnBackendCondition extends SpringBootCondition {

    private final Backend backend;

    OnBackendCondition(Backend backend) {
        this.backend = backend;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Backend chosen = Binder.get(context.getEnvironment())
                .bind(ReactiveLocksProperties.PREFIX + ".backend", Backend.class).orElse(Backend.AUTO);
        ConditionMessage.Builder message = ConditionMessage.forCondition("reactive-locks backend " + backend.name().toLowerCase());
        if (chosen == Backend.AUTO || chosen == backend) {
            return ConditionOutcome.match(message.because(ReactiveLocksProperties.PREFIX + ".backend is " + chosen.name().toLowerCase()));
        }
        return ConditionOutcome.noMatch(message.because(ReactiveLocksProperties.PREFIX + ".backend is " + chosen.name().toLowerCase()));
    }

    /** {@code auto} or {@code redis}. */
    static final class Redis extends OnBackendCondition {
        Redis() {
            super(Backend.REDIS);
        }
    }

    /** {@code auto} or {@code postgres}. */
    static final class Postgres extends OnBackendCondition {
        Postgres() {
            super(Backend.POSTGRES);
        }
    }

    /** {@code auto} or {@code etcd}. */
    static final class Etcd extends OnBackendCondition {
        Etcd() {
            super(Backend.ETCD);
        }
    }

    /** {@code auto} or {@code zookeeper}. */
    static final class ZooKeeper extends OnBackendCondition {
        ZooKeeper() {
            super(Backend.ZOOKEEPER);
        }
    }
}
