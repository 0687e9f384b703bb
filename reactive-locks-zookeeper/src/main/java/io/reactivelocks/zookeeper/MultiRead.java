package io.reactivelocks.zookeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import reactor.core.publisher.Mono;

/**
 * The stats of several znodes in one request: ZooKeeper's read-only {@code multi} (3.6+, each
 * {@code getData} answered on its own, not atomically) on the session's {@link ZooKeeper} handle, the
 * paths put under the client's namespace as Curator would. Not API.
 */
final class MultiRead {

    private MultiRead() {
    }

    /**
     * @param client the client (its current handle and namespace)
     * @param paths  the nodes, as the store names them
     * @return one stat per path, in order, empty where the node does not exist; any other failure of an
     *         operation, or of the request, as an error (a {@link KeeperException})
     */
    static Mono<List<Optional<Stat>>> stats(CuratorFramework client, List<String> paths) {
        return Mono.create(sink -> {
            ZooKeeper zk;
            try {
                zk = client.getZookeeperClient().getZooKeeper();
            } catch (Exception e) {
                sink.error(e);
                return;
            }
            List<Op> ops = new ArrayList<>(paths.size());
            for (String p : paths) {
                ops.add(Op.getData(ZKPaths.fixForNamespace(client.getNamespace(), p)));
            }
            zk.multi(ops, (rc, path, ctx, results) -> {
                if (results == null || results.size() != paths.size()) {
                    sink.error(KeeperException.create(KeeperException.Code.get(rc)));
                    return;
                }
                List<Optional<Stat>> out = new ArrayList<>(results.size());
                for (OpResult r : results) {
                    if (r instanceof OpResult.GetDataResult d) {
                        out.add(Optional.of(d.getStat()));
                    } else if (r instanceof OpResult.ErrorResult e && e.getErr() == KeeperException.Code.NONODE.intValue()) {
                        out.add(Optional.empty());
                    } else {
                        int err = r instanceof OpResult.ErrorResult e ? e.getErr() : rc;
                        sink.error(KeeperException.create(KeeperException.Code.get(err)));
                        return;
                    }
                }
                sink.success(out);
            }, null);
        });
    }
}
