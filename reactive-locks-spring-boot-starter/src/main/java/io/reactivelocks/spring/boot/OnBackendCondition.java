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

    private final java.util.List<Backend> backends;

    OnBackendCondition(Backend... backends) {
        this.backends = java.util.List.of(backends);
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Backend chosen = Binder.get(context.getEnvironment())
                .bind(ReactiveLocksProperties.PREFIX + ".backend", Backend.class).orElse(Backend.AUTO);
        ConditionMessage.Builder message = ConditionMessage.forCondition("reactive-locks backend "
                + String.join(" or ", backends.stream().map(b -> b.name().toLowerCase()).toList()));
        if (chosen == Backend.AUTO || backends.contains(chosen)) {
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

    /** {@code auto}, {@code postgres} or {@code mariadb}: a store on the R2DBC {@code ConnectionFactory} bean. */
    static final class Sql extends OnBackendCondition {
        Sql() {
            super(Backend.POSTGRES, Backend.MARIADB);
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
