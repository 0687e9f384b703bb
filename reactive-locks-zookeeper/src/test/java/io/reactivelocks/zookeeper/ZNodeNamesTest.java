package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class ZNodeNamesTest {

    private static final List<String> HOSTILE = List.of("/", ".", "..", "zookeeper", "/zookeeper/quota", "a/b/../c",
            "nul\u0000byte", "line\nbreak", "\u0001\u001f\u007f\u0085", "\ud800", "\uffff", "ünïcødé-锁-🔒", " ", "~x",
            "x".repeat(1024), "é".repeat(512));

    @Test
    void everyNameBecomesOneSafeSegmentAndBack() {
        for (String name : HOSTILE) {
            String segment = ZNodeNames.segment(name);
            assertThat(segment).as("segment of %s", name).matches("n-[A-Za-z0-9_-]*")
                    .isNotIn(".", "..", "zookeeper");
            PathUtils.validatePath("/reactive-locks/" + segment);
            assertThat(ZNodeNames.nameOf(segment)).isEqualTo(name);
        }
        assertThat(ZNodeNames.segment("x".repeat(1024))).hasSizeLessThan(1400);
        assertThat(ZNodeNames.segment("a")).isNotEqualTo(ZNodeNames.segment("a/"));
        // a lone surrogate is its own lock, not the same one as '?'
        assertThat(ZNodeNames.segment("\ud800")).isNotEqualTo(ZNodeNames.segment("?")).isNotEqualTo(ZNodeNames.segment("\udc00"));
    }

    @Test
    void ownerNodesParseBackWhateverTheOwner() {
        for (String owner : List.of("AbC_-123xyzAbC_-123xyz", "with space", "a/b", "-", "~tilde", "ü")) {
            String node = "_c_0b6d4e52-8e2e-4b0b-9a43-3c3b3c7a6d11-" + ZNodeNames.nodeName(owner) + "0000000042";
            PathUtils.validatePath("/r/n-x/" + node, false);
            ZNodeNames.Child c = ZNodeNames.parse(node);
            assertThat(c).isNotNull();
            assertThat(c.owner()).isEqualTo(owner);
            assertThat(c.sequence()).isEqualTo(42);
            assertThat(ZNodeNames.parse(ZNodeNames.nodeName(owner) + "0000000007").owner()).as("unprotected").isEqualTo(owner);
        }
        assertThat(ZNodeNames.parse("something-else")).isNull();
        assertThat(ZNodeNames.parse("lock--0000000001")).isNull();
        assertThat(ZNodeNames.sorted(List.of("lock-b-0000000010", "junk", "lock-a-0000000002")))
                .extracting(ZNodeNames.Child::owner).containsExactly("a", "b");
    }

    @Test
    void rootsAreChecked() {
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().root("no-slash")).hasMessageContaining("root");
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().root("/trailing/")).hasMessageContaining("root");
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().root("/")).hasMessageContaining("root");
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().root("/zookeeper/x")).hasMessageContaining("root");
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().root(null)).hasMessageContaining("root");
        assertThatThrownBy(() -> ZooKeeperLockOptions.builder().digestAcl("a:b", "c")).hasMessageContaining("user");
        assertThat(ZooKeeperLockOptions.builder().root("/apps/locks").build().root()).isEqualTo("/apps/locks");
    }
}
