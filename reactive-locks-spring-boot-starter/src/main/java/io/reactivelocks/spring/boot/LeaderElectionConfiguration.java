package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.election.LeaderElection;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link LeaderElection} on the {@link LockClient} bean (the auto-configured one or the application's), unless
 * the application defines its own. Its campaigns use the client's options without a wait timeout: a candidate waits
 * until it leads or is cancelled, whatever {@code reactive-locks.wait-timeout} bounds acquires to. It owns nothing:
 * closing the client resigns its leaderships.
 */
@Configuration(proxyBeanMethods = false)
class LeaderElectionConfiguration {

    @Bean
    @ConditionalOnBean(LockClient.class)
    @ConditionalOnMissingBean(LeaderElection.class)
    LeaderElection reactiveLocksLeaderElection(LockClient locks) {
        return LeaderElection.create(locks, locks.options().mutate().waitTimeout(null).build());
    }
}
