package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.testing.InProcessCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The invariants of API.md on a cluster of two real nodes. */
class TwoNodeClusterTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(2);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @AfterEach
    void everyNodeBackUp() {
        cluster.startNode(0);
        cluster.startNode(1);
    }

    @Test
    void getOneOfTwoReturnsWhatPutTwoOfTwoStoredWithEitherNodeDown() {
        for (int down = 0; down < 2; down++) {
            String key = "two-of-two-" + down;
            assertThat(cluster.client(down).put(key, "v".getBytes(), "2/2").statusCode()).isEqualTo(201);
            cluster.stopNode(down);
            assertThat(text(cluster.client(1 - down).get(key, "1/2"))).as("node %d down", down).isEqualTo("v");
            cluster.startNode(down);
        }
    }

    @Test
    void getOneOfTwoSeesDeleteTwoOfTwoWithEitherNodeDown() {
        for (int down = 0; down < 2; down++) {
            String key = "deleted-two-of-two-" + down;
            cluster.client(0).put(key, "v".getBytes(), "2/2");
            assertThat(cluster.client(down).delete(key, "2/2").statusCode()).isEqualTo(202);
            cluster.stopNode(down);
            assertThat(cluster.client(1 - down).get(key, "1/2").statusCode()).as("node %d down", down).isEqualTo(404);
            cluster.startNode(down);
        }
    }

    @Test
    void theDefaultOfTwoNodesIsTwoOfTwoSoOneNodeDownIs504() {
        assertThat(cluster.client(0).put("default-two", "v").statusCode()).isEqualTo(201);
        assertThat(cluster.holders("default-two")).hasSize(2);

        cluster.stopNode(1);
        assertThat(cluster.client(0).put("default-two", "w").statusCode()).isEqualTo(504);
        assertThat(cluster.client(0).get("default-two").statusCode()).isEqualTo(504);
        assertThat(text(cluster.client(0).get("default-two", "1/2"))).isIn("v", "w");
    }
}
