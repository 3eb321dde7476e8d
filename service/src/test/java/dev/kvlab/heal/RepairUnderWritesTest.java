package dev.kvlab.heal;

import static dev.kvlab.storage.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.cluster.Topology;
import dev.kvlab.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rounds back to back while clients write: the buckets that differ (writes in flight) are compared
 * by the keys changed on either side, not by a scan of the store. (A round whose hashes were built
 * anew, because more keys changed since the last update than re-reading them is worth in so small
 * a store, knows no changes, and scans: those rounds are left out.)
 */
class RepairUnderWritesTest {

    static final int KEYS = 2000;
    InProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void roundsDuringWritesCompareTheChangedKeysNotTheStore() throws Exception {
        cluster = RepairTest.threeNodesInSync(KEYS);
        RepairService repair = cluster.bean(0, RepairService.class);
        Topology topology = cluster.bean(0, TopologyHistory.class).current();
        String peer = cluster.replicaUrl(1);
        repair.round(topology, peer).block(Duration.ofSeconds(60));

        AtomicBoolean writing = new AtomicBoolean(true);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            for (int i = 0; writing.get(); i++) {
                cluster.client(i % 3).put("key-" + (i * 7919 % KEYS), bytes("again " + i), "2/3");
            }
        });
        RepairService peerRepair = cluster.bean(1, RepairService.class);
        List<PeerRepair.Round> rounds = new ArrayList<>();
        try {
            for (int i = 0; i < 15; i++) {
                long rebuilds = repair.hashRebuilds() + peerRepair.hashRebuilds();
                PeerRepair.Round round = repair.round(topology, peer).block(Duration.ofSeconds(60));
                assertThat(round.complete()).as(round.toString()).isTrue();
                if (repair.hashRebuilds() + peerRepair.hashRebuilds() == rebuilds) {
                    rounds.add(round);
                }
            }
        } finally {
            writing.set(false);
            writer.get();
        }
        long differing = rounds.stream().mapToLong(PeerRepair.Round::bucketsDiffering).sum();
        long explained = rounds.stream().mapToLong(PeerRepair.Round::bucketsByChangedKeys).sum();
        long read = rounds.stream().mapToLong(PeerRepair.Round::recordsRead).sum();
        assertThat(rounds).as("rounds that followed the changes").hasSizeGreaterThanOrEqualTo(5);
        assertThat(differing).as("writes in flight make buckets differ").isPositive();
        assertThat(explained).as("differing buckets compared by changed keys alone, of " + differing).isEqualTo(differing);
        assertThat(read).as("records read by " + rounds.size() + " rounds, against " + KEYS + " in the store").isLessThan(KEYS);
    }
}
