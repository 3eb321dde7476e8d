package dev.kvlab.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.it.fixture.DockerResources;
import dev.kvlab.it.fixture.DockerResources.Counts;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.fixture.KvlabImage;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Nothing outlives the tests: a cluster removes its containers, network and volumes when closed,
 * when its test fails, when its JVM is interrupted, and when its JVM was killed (on the next run).
 */
class FixtureCleanupIT {

    @Test
    void closingAClusterRemovesItsContainersNetworkAndVolumes() {
        KvlabCluster cluster = KvlabCluster.ofSize(2);
        cluster.start();
        assertThat(resourcesOf(cluster.id())).isEqualTo(new Counts(2, 1, 2));

        cluster.close();

        assertThat(resourcesOf(cluster.id())).isEqualTo(new Counts(0, 0, 0));
    }

    @Test
    void aFailingTestStillRemovesEverything() {
        List<String> ids = new ArrayList<>();
        assertThatThrownBy(() -> {
            try (KvlabCluster cluster = KvlabCluster.ofSize(1)) {
                cluster.start();
                ids.add(cluster.id());
                cluster.killNode(0);
                throw new AssertionError("the scenario failed");
            }
        }).hasMessage("the scenario failed");

        assertThat(resourcesOf(ids.getFirst())).isEqualTo(new Counts(0, 0, 0));
    }

    @Test
    void anInterruptedJvmRemovesItsClusterOnTheWayOut() throws Exception {
        Process jvm = startClusterInAnotherJvm();
        String id = awaitReady(jvm);
        assertThat(resourcesOf(id)).isEqualTo(new Counts(1, 1, 1));

        jvm.destroy(); // SIGTERM, as Ctrl-C or a CI timeout would
        assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(resourcesOf(id)).isEqualTo(new Counts(0, 0, 0));
    }

    @Test
    void aKilledJvmsLeftoversAreRemovedByTheNextRun() throws Exception {
        Process jvm = startClusterInAnotherJvm();
        String id = awaitReady(jvm);

        jvm.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(jvm.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(resourcesOf(id)).as("left behind by a killed JVM").isEqualTo(new Counts(1, 1, 1));

        Counts removed = DockerResources.removeLeftovers();

        assertThat(removed.containers()).isGreaterThanOrEqualTo(1);
        assertThat(resourcesOf(id)).isEqualTo(new Counts(0, 0, 0));
    }

    private static Counts resourcesOf(String clusterId) {
        return DockerResources.countLabelled(DockerResources.CLUSTER_LABEL, clusterId);
    }

    /** A JVM on this test's class path (failsafe's manifest-only jar names it all), this test's environment. */
    private static Process startClusterInAnotherJvm() throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = List.of(java,
                "-cp", System.getProperty("java.class.path"),
                "-Dkvlab.image=" + KvlabImage.name().asCanonicalNameString(),
                "-Dkvlab.it.logs=" + System.getProperty("kvlab.it.logs", "target/kvlab-it-logs"),
                ClusterInAnotherJvm.class.getName());
        return new ProcessBuilder(command).redirectErrorStream(true).start();
    }

    private static String awaitReady(Process jvm) throws IOException {
        BufferedReader output = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        for (String line; (line = output.readLine()) != null; ) {
            if (line.startsWith(ClusterInAnotherJvm.READY)) {
                String id = line.substring(ClusterInAnotherJvm.READY.length()).trim();
                Thread.ofVirtual().start(() -> drain(output));
                return id;
            }
            lines.add(line);
        }
        throw new AssertionError("the other JVM ended before its cluster was up:\n" + String.join("\n", lines));
    }

    /** Reads the other JVM's output to its end, so it never blocks on a full pipe. */
    private static void drain(BufferedReader output) {
        try {
            while (output.readLine() != null) {
                // its log: of no interest once the cluster is up
            }
        } catch (IOException closed) {
            // the JVM ended
        }
    }
}
