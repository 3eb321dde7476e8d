package dev.kvlab.it;

import static dev.kvlab.it.fixture.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvlabCluster;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * A static cluster of three containers on their own network: every node is up, knows the others
 * by their aliases, and each fault helper does to the network what it says. Every test leaves the
 * cluster as it found it.
 */
@Testcontainers
class ThreeNodeClusterFixtureIT {

    /**
     * A replica timeout above the default 1 s: a node's first requests to its peers take longer
     * than that on a busy 2-core machine (a cold JVM), and this class checks the wiring, not latency.
     */
    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withSetting("kvlab.replication.timeout", "5s");

    @Test
    void everyNodeAnswersStatus() {
        for (int i = 0; i < cluster.size(); i++) {
            assertThat(cluster.client(i).status().statusCode()).as(cluster.alias(i)).isEqualTo(200);
        }
    }

    @Test
    void everyNodeKnowsTheStaticTopologyTheSecretAndItsSettings() {
        for (int i = 0; i < cluster.size(); i++) {
            var config = cluster.node(i).getContainerInfo().getConfig();
            assertThat(config.getEnv()).contains(
                    "KVLAB_CLUSTER_NODES=http://node-0:8080,http://node-1:8080,http://node-2:8080",
                    "KVLAB_CLUSTER_SELF=http://node-" + i + ":8080",
                    "KVLAB_CLUSTER_SECRET=" + cluster.secret());
            assertThat(config.getCmd()).containsExactly("--kvlab.replication.timeout=5s");
        }
    }

    @Test
    void nodesReachEachOtherByAlias() throws Exception {
        for (int from = 0; from < cluster.size(); from++) {
            for (int to = 0; to < cluster.size(); to++) {
                assertThat(statusFrom(from, to)).as(cluster.alias(from) + " -> " + cluster.alias(to)).isEqualTo("200");
            }
        }
    }

    @Test
    void aWriteThroughOneNodeIsReadThroughEveryNode() {
        assertThat(cluster.client(0).put("everywhere", "same", "3/3").statusCode()).isEqualTo(201);
        for (int i = 0; i < cluster.size(); i++) {
            assertThat(text(cluster.client(i).get("everywhere", "3/3"))).as(cluster.alias(i)).isEqualTo("same");
        }
    }

    @Test
    void aDisconnectedNodeIsCutOffFromItsPeersUntilReconnected() throws Exception {
        String node1Address = cluster.address(1);
        String node2Address = cluster.address(2);
        cluster.disconnectNode(2);
        try {
            assertThat(statusFrom(0, 2)).as("node-0 -> node-2 while cut off").isNotEqualTo("200");
            assertThat(statusFrom(2, 1)).as("node-2 -> node-1 while cut off").isNotEqualTo("200");
            assertThat(statusAt(2, "http://" + node1Address + ":8080")).as("node-2 -> node-1 by address").isNotEqualTo("200");
            assertThat(statusAt(0, "http://" + node2Address + ":8080")).as("node-0 -> node-2 by address").isNotEqualTo("200");
            assertThat(cluster.client(2).status().statusCode()).as("node-2 still answers the host").isEqualTo(200);
        } finally {
            cluster.reconnectNode(2);
        }
        assertThat(cluster.address(2)).as("the same address again").isEqualTo(node2Address);
        assertThat(statusFrom(0, 2)).as("node-0 -> node-2 after reconnecting").isEqualTo("200");
        assertThat(statusFrom(2, 1)).as("node-2 -> node-1 after reconnecting").isEqualTo("200");
        assertThat(cluster.client(2).status().statusCode()).isEqualTo(200);
    }

    @Test
    void aKilledNodeStartsAgainInTheSameContainer() throws Exception {
        String container = cluster.node(1).getContainerId();
        cluster.killNode(1);
        assertThat(cluster.node(1).getCurrentContainerInfo().getState().getExitCodeLong()).isEqualTo(137L);
        assertThat(statusFrom(0, 1)).isNotEqualTo("200");

        cluster.startNode(1);

        assertThat(cluster.node(1).getContainerId()).isEqualTo(container);
        assertThat(cluster.client(1).status().statusCode()).isEqualTo(200);
        assertThat(statusFrom(0, 1)).isEqualTo("200");
    }

    @Test
    void aPausedNodeIsUnreachableUntilUnpaused() throws Exception {
        cluster.pauseNode(1);
        try {
            assertThat(statusFrom(0, 1)).as("node-0 -> paused node-1").isNotEqualTo("200");
        } finally {
            cluster.unpauseNode(1);
        }
        assertThat(statusFrom(0, 1)).isEqualTo("200");
    }

    @Test
    void aRecreatedNodeKeepsItsAliasAndVolume() throws Exception {
        String before = cluster.node(0).getContainerId();
        cluster.recreateNode(0);

        assertThat(cluster.node(0).getContainerId()).isNotEqualTo(before);
        assertThat(cluster.node(0).getContainerInfo().getMounts())
                .anySatisfy(mount -> assertThat(mount.getName()).isEqualTo(cluster.volume(0)));
        assertThat(statusFrom(1, 0)).isEqualTo("200");
        assertThat(cluster.client(0).status().statusCode()).isEqualTo(200);
    }

    /** The HTTP status of node {@code to}'s /v0/status, fetched from inside node {@code from}'s container. */
    private static String statusFrom(int from, int to) throws IOException, InterruptedException {
        return statusAt(from, cluster.url(to));
    }

    /** The HTTP status of {@code baseUrl}/v0/status from inside node {@code from}'s container ("000": no answer). */
    private static String statusAt(int from, String baseUrl) throws IOException, InterruptedException {
        ExecResult result = cluster.node(from).execInContainer(
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2", baseUrl + "/v0/status");
        return result.getStdout().trim();
    }
}
