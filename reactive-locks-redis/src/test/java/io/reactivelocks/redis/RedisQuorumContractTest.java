package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The backend contract suite against quorum mode over three real redis-servers. */
class RedisQuorumContractTest extends LockBackendContract {

    private static final List<RedisTestSupport> SERVERS = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        for (int i = 0; i < 3; i++) {
            SERVERS.add(RedisTestSupport.start());
        }
    }

    @AfterAll
    static void stopServers() {
        SERVERS.forEach(RedisTestSupport::close);
        SERVERS.clear();
    }

    @Override
    protected LockBackend newBackend() {
        List<RedisLockBackend> instances = new ArrayList<>();
        for (RedisTestSupport s : SERVERS) {
            instances.add(s.backend());
        }
        return RedisQuorumBackend.create(instances);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        for (RedisTestSupport s : SERVERS) {
            assertThat(s.scanKeys()).as("lock keys left on %s", s.server).noneMatch(k -> k.endsWith(":lock"));
        }
    }
}
