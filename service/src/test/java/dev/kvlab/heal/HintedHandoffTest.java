package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.testing.InProcessCluster;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node stopped while keys are written and deleted at 2/3 gets every one of those writes once it is
 * back, from the hints its peers kept, without a read or a repair to show it the way.
 */
class HintedHandoffTest {

    static final int KEYS = 200;
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeBackFromAnOutageGetsTheWritesAndDeletesItMissedFromHints() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.hints.replay-interval", "200ms", "kvlab.heal.repair.enabled", "false"));
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(0).put("deleted-" + i, bytes("before"), "3/3").statusCode()).isEqualTo(201);
        }
        cluster.stopNode(2);
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 2).put("written-" + i, bytes("value " + i), "2/3").statusCode()).isEqualTo(201);
            assertThat(cluster.client(i % 2).delete("deleted-" + i, "2/3").statusCode()).isEqualTo(202);
        }
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(
                cluster.bean(0, HintStore.class).pendingCount() + cluster.bean(1, HintStore.class).pendingCount())
                .as("hints kept for node 2 by the coordinators").isEqualTo(2L * KEYS));
        assertThat(cluster.peerMetric(0, "kvlab_peer_hints_pending", cluster.url(2))
                + cluster.peerMetric(1, "kvlab_peer_hints_pending", cluster.url(2)))
                .as("kvlab_peer_hints_pending for node 2 on nodes 0 and 1").isEqualTo(2.0 * KEYS);
        assertThat(cluster.peerMetric(0, "kvlab_peer_hints_pending", cluster.url(1))).as("for node 1, which took every write").isZero();

        cluster.startNode(2);

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(cluster.bean(0, HintStore.class).pendingCount()).isZero();
            assertThat(cluster.bean(1, HintStore.class).pendingCount()).isZero();
        });
        for (int i = 0; i < KEYS; i++) {
            assertThat(text(cluster.client(2).internalRecord("written-" + i))).as("node 2's own replica").isEqualTo("value " + i);
            assertThat(cluster.client(2).get("deleted-" + i, "1/1").statusCode()).isEqualTo(404);
        }
        // Each replay step was held on the replaying node's memory budget, and given back.
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(cluster.bean(0, MemoryBudget.class).held()).isZero();
            assertThat(cluster.bean(1, MemoryBudget.class).held()).isZero();
        });
    }

    @Test
    void hintsOutliveARestartOfTheCoordinatorThatKeptThem() throws Exception {
        cluster = InProcessCluster.start(2, Map.of("kvlab.replication.timeout", "500ms",
                "kvlab.heal.hints.replay-interval", "200ms", "kvlab.heal.repair.enabled", "false"));
        cluster.stopNode(1);
        assertThat(cluster.client(0).put("kept-across-restart", bytes("v"), "1/2").statusCode()).isEqualTo(201);
        // The hint is stored in the background, after the write was acknowledged.
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.bean(0, HintStore.class).pendingCount() == 1);

        cluster.stopNode(0);
        cluster.startNode(0);
        assertThat(cluster.bean(0, HintStore.class).pendingCount()).as("counted again from the store").isEqualTo(1);
        cluster.startNode(1);

        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(text(cluster.client(1).internalRecord("kept-across-restart"))).isEqualTo("v"));
    }
}
