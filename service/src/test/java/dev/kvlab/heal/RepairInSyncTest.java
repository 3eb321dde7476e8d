package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Topology;
import dev.kvlab.testing.InProcessCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a round costs between replicas in sync: once the hashes are up to date, a round reads no
 * record on either side when nothing was written since the last one, and only the records written
 * since when something was.
 */
class RepairInSyncTest {

    static final int KEYS = 200;
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRoundBetweenReplicasInSyncReadsNoRecords() throws Exception {
        cluster = RepairTest.threeNodesInSync(KEYS);
        RepairService repair = cluster.bean(0, RepairService.class);
        RepairService peerRepair = cluster.bean(1, RepairService.class);
        Topology topology = cluster.bean(0, TopologyHistory.class).current();
        String peer = cluster.replicaUrl(1);

        PeerRepair.Round first = repair.round(topology, peer).block(Duration.ofSeconds(60));
        assertThat(first.complete()).as(first.toString()).isTrue();
        assertThat(first.bucketsDiffering()).as("the replicas are in sync").isZero();

        long peerReadBefore = peerRepair.recordsRead();
        PeerRepair.Round inSync = repair.round(topology, peer).block(Duration.ofSeconds(60));
        assertThat(inSync.complete()).as(inSync.toString()).isTrue();
        assertThat(inSync.bucketsDiffering()).isZero();
        assertThat(inSync.recordsRead()).as("records this node read for a round where nothing changed").isZero();
        assertThat(peerRepair.recordsRead() - peerReadBefore).as("records the peer read to answer it").isZero();

        for (int i = 0; i < 5; i++) {
            assertThat(cluster.client(0).put("key-" + i, bytes("again " + i), "3/3").statusCode()).isEqualTo(201);
        }
        PeerRepair.Round afterWrites = repair.round(topology, peer).block(Duration.ofSeconds(60));
        assertThat(afterWrites.complete()).isTrue();
        assertThat(afterWrites.bucketsDiffering()).isZero();
        assertThat(afterWrites.recordsRead()).as("the 5 records written since, at the snapshot before and the one after")
                .isEqualTo(10);
    }
}
