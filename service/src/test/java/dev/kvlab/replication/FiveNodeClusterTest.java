package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The invariants of API.md on a cluster of five real nodes. */
class FiveNodeClusterTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(5);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void everyNodeBackUp() {
        for (int i = 0; i < 5; i++) {
            cluster.startNode(i);
        }
    }

    @Test
    void theDefaultIsThreeOfFiveSoTwoNodesDownAreToleratedAndThreeAreNot() {
        assertThat(cluster.client(0).put("default-five", "v").statusCode()).isEqualTo(201);
        cluster.stopNode(1);
        cluster.stopNode(2);
        assertThat(text(cluster.client(3).get("default-five"))).isEqualTo("v");
        assertThat(cluster.client(4).put("default-five", "w").statusCode()).isEqualTo(201);
        assertThat(text(cluster.client(0).get("default-five"))).isEqualTo("w");

        cluster.stopNode(3);
        assertThat(cluster.client(0).get("default-five").statusCode()).isEqualTo(504);
    }

    @Test
    void quorumReadsSeeQuorumWritesAndDeletesWhileFewerThanAQuorumIsDown() {
        cluster.client(0).put("quorum-five", "first".getBytes(), "3/5");
        cluster.stopNode(0);
        cluster.stopNode(4);
        assertThat(cluster.client(2).put("quorum-five", "second".getBytes(), "3/5").statusCode()).isEqualTo(201);
        cluster.startNode(0);
        cluster.startNode(4);
        cluster.stopNode(1);
        cluster.stopNode(2);
        assertThat(text(cluster.client(3).get("quorum-five", "3/5"))).isEqualTo("second");

        assertThat(cluster.client(4).delete("quorum-five", "3/5").statusCode()).isEqualTo(202);
        cluster.startNode(1);
        cluster.startNode(2);
        cluster.stopNode(3);
        cluster.stopNode(4);
        assertThat(cluster.client(1).get("quorum-five", "3/5").statusCode()).isEqualTo(404);
    }

    @Test
    void theReplicasOfASmallerFromAreAPrefixOfALargerFrom() {
        for (int i = 0; i < 5; i++) {
            String key = "prefix-" + i;
            cluster.client(i).put(key, "v".getBytes(), "2/2");
            List<Integer> two = awaitHolders(key, 2);
            cluster.client(i).put(key, "w".getBytes(), "4/4");
            List<Integer> four = awaitHolders(key, 4);
            assertThat(four).containsAll(two);
        }
    }

    @Test
    void aOneOfOneWriteIsVisibleThroughEveryCoordinator() {
        assertThat(cluster.client(3).put("five-one-of-one", "v".getBytes(), "1/1").statusCode()).isEqualTo(201);
        for (int reader = 0; reader < 5; reader++) {
            assertThat(text(cluster.client(reader).get("five-one-of-one", "1/1"))).as("via node %d", reader).isEqualTo("v");
        }
    }

    private static List<Integer> awaitHolders(String key, int count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (cluster.holders(key).size() < count && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        List<Integer> holders = cluster.holders(key);
        assertThat(holders).as("replicas holding " + key).hasSize(count);
        return holders;
    }
}
