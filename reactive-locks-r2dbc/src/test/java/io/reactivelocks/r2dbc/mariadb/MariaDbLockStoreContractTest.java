package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.ConceptNotOfferedException;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The store-session contract on a real MariaDB. */
class MariaDbLockStoreContractTest extends LockStoreContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("store_session");

    @Override
    protected LockStore connect() {
        return MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return MariaDbStoreSession.OFFERED;
    }

    @Test
    void aConceptNotOfferedYetIsRefusedNamingTheStore() {
        assertThatThrownBy(() -> store().taskQueue(io.reactivelocks.LockOptions.defaults())).isInstanceOf(ConceptNotOfferedException.class)
                .hasMessageContaining("mariadb").hasMessageContaining(Concept.TASK_QUEUE.toString());
        assertThat(store().name()).isEqualTo("mariadb");
    }
}
