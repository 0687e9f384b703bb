package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The admin contract on a real etcd: every session has its own jetcd client (its own connection),
 * as separate processes would, so a force-release deletes another client's key on another
 * session lease. The lease time of 3 s fits etcd (its minimum TTL is 2 s with the default
 * election timeout).
 */
class EtcdLockAdminContractTest extends LockAdminContract {

    private static EtcdTestSupport etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected LockStore connect() {
        EtcdConnectionOptions connection = EtcdConnectionOptions.builder()
                .endpoints("http://" + etcd.server.host() + ":" + etcd.server.port())
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        return EtcdLocks.connect(connection, EtcdLockOptions.builder().prefix(etcd.prefix).requestTimeout(Duration.ofSeconds(5)).build());
    }

    @Test
    void aNamePrefixIsRangedByItsWholeBase64Groups() {
        assertThat(EtcdStoreSession.encodedStem("")).isEmpty();
        assertThat(EtcdStoreSession.encodedStem("ab")).isEmpty();
        assertThat(EtcdStoreSession.encodedStem("abcd")).isEqualTo("YWJj");
        assertThat("YWJjZA").startsWith(EtcdStoreSession.encodedStem("abcd"));
        // a high surrogate that a name may continue as a pair is left out of the range
        assertThat(EtcdStoreSession.encodedStem("abc\uD83D")).isEqualTo("YWJj");
        assertThat(LockNames.base64url("abc\uD83D\uDE00x")).startsWith(EtcdStoreSession.encodedStem("abc\uD83D"));
        assertThat(LockNames.base64url("abcde\uD83D\uDE00")).startsWith(EtcdStoreSession.encodedStem("abcde\uD83D"));
    }

    @Test
    void theListCountsTheWaitersInTheLockQueueAndAForceReleaseGrantsTheFirstOfThem() {
        LockOptions waits = options().mutate().leaseTime(Duration.ofSeconds(60)).waitTimeout(Duration.ofSeconds(30)).build();
        LockAdmin admin = store().admin();
        String name = prefix("waiters") + "lock";
        Lease held = store().locks(waits).acquire(name).block(STEP);
        Mono<Lease> first = store().locks(waits).acquire(name).cache();
        first.subscribe(l -> { }, e -> { });
        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.waiters()).isEqualTo(1)));
        Mono<Lease> second = store().locks(waits).acquire(name).cache();
        second.subscribe(l -> { }, e -> { });
        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.waiters()).as("the holder not counted").isEqualTo(2)));

        assertThat(admin.forceRelease(name).block(STEP)).singleElement().satisfies(g -> assertThat(g.token()).isEqualTo(held.token()));

        Lease granted = first.block(STEP); // the queue is FIFO: the first waiter is next
        assertThat(admin.list(name).collectList().block(STEP)).singleElement().satisfies(g -> {
            assertThat(g.token()).isEqualTo(granted.token());
            assertThat(g.owner()).isEqualTo(granted.owner());
            assertThat(g.waiters()).isEqualTo(1);
        });
        granted.release().block(STEP);
        second.block(STEP).release().block(STEP);
    }

    @Test
    void aPrefixCutAnywhereInAMultiByteNameFindsExactlyTheNamesStartingWithIt() {
        LockClient locks = store().locks(options());
        LockAdmin admin = store().admin();
        String base = prefix("utf8");
        String pair = base + "\u00e9\u20ac\uD83D\uDE00x";
        List<String> names = List.of(pair, base + "\u00e9\u20ac\uD83D\uDE01x", base + "\u00e9\u20ac\uD83Dz");
        List<Lease> held = new ArrayList<>();
        names.forEach(n -> held.add(locks.acquire(n).block(STEP)));
        for (int i = base.length(); i <= pair.length(); i++) {
            String p = pair.substring(0, i);
            List<String> expected = names.stream().filter(n -> n.startsWith(p)).sorted().toList();
            assertThat(admin.list(p).map(HeldGrant::name).collectList().block(STEP)).as("prefix of %d chars", i)
                    .containsExactlyElementsOf(expected);
        }
        held.forEach(l -> l.release().block(STEP));
    }
}
