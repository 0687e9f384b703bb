package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.utility.DockerImageName;

/**
 * The images the tests run. By default the local images that {@code .ci/build-images.sh} builds from
 * Debian's packages (images cannot be pulled on the build machines), declared compatible substitutes
 * for the official ones; with {@code -Dreactivelocks.images=official} the official images themselves.
 * {@link #require()} fails (never skips) when no Docker API answers, saying what to install; it builds
 * the local images when they are missing.
 */
final class LocalImages {

    static final boolean OFFICIAL = "official".equals(System.getProperty("reactivelocks.images"));

    static final DockerImageName REDIS = image("localhost/reactivelocks-redis:7", "redis", RedisLockContainer.DEFAULT_IMAGE);
    static final DockerImageName POSTGRES = image("localhost/reactivelocks-postgres:15", "postgres",
            PostgresLockContainer.DEFAULT_IMAGE);
    static final DockerImageName MARIADB = image("localhost/reactivelocks-mariadb:10.11", "mariadb",
            MariaDbLockContainer.DEFAULT_IMAGE);
    static final DockerImageName ETCD = image("localhost/reactivelocks-etcd:3.4", "quay.io/coreos/etcd",
            EtcdLockContainer.DEFAULT_IMAGE);
    static final DockerImageName ZOOKEEPER = image("localhost/reactivelocks-zookeeper:3.8", "zookeeper",
            ZooKeeperLockContainer.DEFAULT_IMAGE);

    private static final String INSTALL = "Testcontainers needs a Docker API. On Debian: `apt-get install podman runc`, "
            + "then run .ci/install-servers.sh (configures /etc/containers/containers.conf with runtime runc, "
            + "cgroupfs and ulimits, starts `podman system service --time=0 unix:///run/podman/podman.sock` and "
            + "builds the local images); with a Docker engine run Maven with "
            + "-Dtestcontainers.docker.host=unix:///var/run/docker.sock -Dreactivelocks.images=official";

    private static boolean checked;

    private LocalImages() {
    }

    private static DockerImageName image(String local, String official, DockerImageName officialDefault) {
        return OFFICIAL ? officialDefault : DockerImageName.parse(local).asCompatibleSubstituteFor(official);
    }

    /** Fails the test with what to install when no Docker API answers; builds missing local images. */
    static synchronized void require() {
        if (checked) {
            return;
        }
        if (!DockerClientFactory.instance().isDockerAvailable()) {
            fail("no Docker API answers at DOCKER_HOST=" + System.getenv("DOCKER_HOST") + ". " + INSTALL);
        }
        if (!OFFICIAL && !localImagesPresent()) {
            buildLocalImages();
            if (!localImagesPresent()) {
                fail("the local images are still missing after .ci/build-images.sh. " + INSTALL);
            }
        }
        checked = true;
    }

    private static boolean localImagesPresent() {
        for (DockerImageName image : List.of(REDIS, POSTGRES, MARIADB, ETCD, ZOOKEEPER)) {
            try {
                DockerClientFactory.lazyClient().inspectImageCmd(image.asCanonicalNameString()).exec();
            } catch (RuntimeException e) {
                return false;
            }
        }
        return true;
    }

    private static void buildLocalImages() {
        String script = System.getProperty("reactivelocks.images.script", "../.ci/build-images.sh");
        if (!Files.isRegularFile(Path.of(script))) {
            fail("the local images are missing and " + script + " is not there to build them. " + INSTALL);
        }
        try {
            File log = Files.createTempFile("build-images", ".log").toFile();
            Process p = new ProcessBuilder("bash", script).redirectErrorStream(true).redirectOutput(log).start();
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                fail(script + " did not finish within 10 minutes");
            }
            if (p.exitValue() != 0) {
                fail(script + " failed (exit " + p.exitValue() + "):\n"
                        + Files.readString(log.toPath(), StandardCharsets.UTF_8));
            }
        } catch (java.io.IOException e) {
            fail("cannot run " + script + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted while building the local images");
        }
    }
}
