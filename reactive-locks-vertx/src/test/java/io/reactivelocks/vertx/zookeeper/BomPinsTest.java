package io.reactivelocks.vertx.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Vert.x ZooKeeper bridge runs on the Curator and ZooKeeper client versions this module's tests
 * resolve (vertx-zookeeper alone would bring curator-recipes 5.4.0 and ZooKeeper 3.7.2 beside the
 * Curator framework reactive-locks-zookeeper needs): {@code reactive-locks-bom} pins exactly those, so
 * that an application importing it gets the tested set.
 */
class BomPinsTest {

    private static final Path BOM = Path.of("..", "reactive-locks-bom", "pom.xml");

    @Test
    void theBomPinsTheCuratorAndZooKeeperVersionsTheseTestsRunOn() throws IOException {
        String bom = Files.readString(BOM);
        String curator = resolved("org.apache.curator", "curator-framework");
        assertThat(resolved("org.apache.curator", "curator-recipes")).as("recipes beside the framework").isEqualTo(curator);
        assertThat(resolved("org.apache.curator", "curator-client")).as("client beside the framework").isEqualTo(curator);
        for (String artifact : new String[] {"curator-framework", "curator-client", "curator-recipes"}) {
            assertThat(managed(bom, "org.apache.curator", artifact)).as("%s in %s", artifact, BOM).isEqualTo(curator);
        }
        assertThat(managed(bom, "org.apache.zookeeper", "zookeeper")).as("zookeeper in %s", BOM)
                .isEqualTo(resolved("org.apache.zookeeper", "zookeeper"));
    }

    /** @return the version of the artifact on this test's class path, from its jar's Maven metadata */
    private static String resolved(String group, String artifact) throws IOException {
        String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = BomPinsTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as("%s on the class path", resource).isNotNull();
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        }
    }

    /** @return the version the BOM manages for the artifact, its properties resolved */
    private static String managed(String bom, String group, String artifact) {
        Matcher m = Pattern.compile("<groupId>" + Pattern.quote(group) + "</groupId>\\s*<artifactId>" + Pattern.quote(artifact)
                + "</artifactId>\\s*<version>([^<]+)</version>").matcher(bom);
        assertThat(m.find()).as("%s:%s managed by the BOM", group, artifact).isTrue();
        String version = m.group(1).trim();
        Matcher property = Pattern.compile("\\$\\{([^}]+)}").matcher(version);
        if (property.matches()) {
            Matcher value = Pattern.compile("<" + Pattern.quote(property.group(1)) + ">([^<]+)</").matcher(bom);
            assertThat(value.find()).as("property %s in the BOM", property.group(1)).isTrue();
            version = value.group(1).trim();
        }
        return version;
    }
}
