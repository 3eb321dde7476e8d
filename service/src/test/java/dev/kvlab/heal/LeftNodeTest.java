package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node whose leave is finished is out of its peers' topology as soon as it stops, while their
 * listing still names it (the static node list here, as DNS does for shrink-after): writes whose
 * replicas counted it succeed at once through the nodes that stay, and no acknowledged key is
 * lost. Started again, it is back in their topology at once. Only a signed peer call says a node
 * has left.
 */
class LeftNodeTest {

    static final int KEYS = 200;
    static final String[] REPLICAS = {"1/1", "2/2", "2/3", "3/3"};
    /** Long, so a write that waits for the stopped node is seen failing, not answered in time. */
    static final String TIMEOUT = "2s";
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void writesThroughTheNodesThatStaySucceedAtOnceWhenANodeHasLeft() throws Exception {
        cluster = InProcessCluster.start(4, Map.of("kvlab.replication.timeout", TIMEOUT));
        Map<String, String> acknowledged = new LinkedHashMap<>();
        for (int i = 0; i < KEYS; i++) {
            String key = "before-" + i;
            assertThat(cluster.client(i % 4).put(key, bytes(key), REPLICAS[i % REPLICAS.length]).statusCode()).isEqualTo(201);
            acknowledged.put(key, REPLICAS[i % REPLICAS.length]);
        }
        leaveAndStop(3);

        // Keys whose replicas among the four nodes counted node 3, written through the nodes that
        // stay at every count that would have needed its answer.
        Ownership four = new Ownership(cluster.nodeUrls());
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < 60; i++) {
            String key = "after-" + i;
            if (four.ownersOf(key.getBytes(StandardCharsets.UTF_8), 3).contains(cluster.replicaUrl(3))) {
                keys.add(key);
            }
        }
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            String replicas = i % 3 == 0 ? "2/2" : i % 3 == 1 ? "2/3" : "3/3";
            var put = cluster.client(i % 3).put(key, bytes(key), replicas);
            assertThat(put.statusCode()).as("%s written at %s through node %d once node 3 has left: %s", key, replicas, i % 3, text(put))
                    .isEqualTo(201);
            acknowledged.put(key, replicas);
        }

        // Each acknowledged key, read at the count of replicas it was written with, one answer enough.
        int i = 0;
        for (Map.Entry<String, String> written : acknowledged.entrySet()) {
            String key = written.getKey();
            String replicas = "1/" + written.getValue().substring(2);
            var read = cluster.client(i++ % 3).get(key, replicas);
            assertThat(read.statusCode()).as("%s written at %s, read at %s after node 3 has left", key, written.getValue(), replicas)
                    .isEqualTo(200);
            assertThat(text(read)).isEqualTo(key);
        }
        for (int node = 0; node < 3; node++) {
            assertThat(cluster.bean(node, TopologyProvider.class).current().nodes()).as("node %d's topology once node 3 has left", node)
                    .containsExactlyInAnyOrderElementsOf(cluster.nodeUrls().subList(0, 3));
        }
    }

    @Test
    void aNodeThatLeftIsBackInItsPeersTopologyWhenItServesAgain() throws Exception {
        cluster = InProcessCluster.start(4, Map.of("kvlab.replication.timeout", TIMEOUT));
        leaveAndStop(3);
        assertThat(cluster.bean(0, TopologyProvider.class).current().nodes()).doesNotContain(cluster.replicaUrl(3));

        cluster.startNode(3);
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            for (int node = 0; node < 3; node++) {
                assertThat(cluster.bean(node, TopologyProvider.class).current().nodes()).as("node %d's topology", node)
                        .containsExactlyInAnyOrderElementsOf(cluster.nodeUrls());
            }
        });
    }

    @Test
    void onlyASignedPeerCallSaysANodeHasLeft() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", TIMEOUT));
        String leaving = cluster.replicaUrl(2);
        var unsigned = KvClient.onPort(Integer.parseInt(cluster.url(0).substring(cluster.url(0).lastIndexOf(':') + 1)))
                .send("POST", "/internal/v1/membership/left", HttpRequest.BodyPublishers.ofString(leaving), "Content-Type", "text/plain");
        assertThat(unsigned.statusCode()).isEqualTo(401);
        assertThat(cluster.bean(0, TopologyProvider.class).current().nodes()).contains(leaving);

        var unknown = cluster.client(0).send("POST", "/internal/v1/membership/left", HttpRequest.BodyPublishers.ofString("http://elsewhere:1"),
                "Content-Type", "text/plain");
        assertThat(unknown.statusCode()).as(text(unknown)).isEqualTo(409);
        assertThat(cluster.bean(0, TopologyProvider.class).current().size()).isEqualTo(3);
    }

    /** Node {@code node} leaves, hands every record to the others in a complete pass, and stops. */
    private void leaveAndStop(int node) {
        var leave = cluster.management(node).send("POST", "/actuator/kvlab/leave", HttpRequest.BodyPublishers.ofString("{}"),
                "Content-Type", "application/json", "Authorization", "Bearer " + cluster.secret());
        assertThat(leave.statusCode()).as(text(leave)).isEqualTo(200);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Leave leaving = cluster.bean(node, Handoff.class).leaving();
            return leaving != null && leaving.passes() > 0 && leaving.lastPass().failed() == 0;
        });
        cluster.stopNode(node);
    }
}
