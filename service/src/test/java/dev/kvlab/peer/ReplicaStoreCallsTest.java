package dev.kvlab.peer;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.LocalStore;
import dev.kvlab.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A replica serves the calls coordinators send it the way it serves its own clients' calls: writes
 * in its group commit, beside its own writes (one RocksDB write a group for all of them, not one
 * more per peer batch), and reads of what is in memory without a storage thread.
 */
class ReplicaStoreCallsTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        // A long replica timeout: on a busy machine a cold node's first calls may take over the default second.
        cluster = InProcessCluster.start(2, Map.of("kvlab.replication.timeout", "10s"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aPeersWritesJoinTheReplicasGroupCommit() {
        LocalStore replica = cluster.bean(1, LocalStore.class);
        long before = replica.groupedWrites();
        for (int i = 0; i < 20; i++) {
            assertThat(cluster.client(0).put("grouped-" + i, ("v" + i).getBytes(), "2/2").statusCode()).isEqualTo(201);
        }
        // Node 1 coordinated none of them: every write it stored came from node 0's batches.
        assertThat(replica.groupedWrites() - before).isGreaterThanOrEqualTo(20);
        for (int i = 0; i < 20; i++) {
            assertThat(text(cluster.client(1).get("grouped-" + i, "1/2"))).isEqualTo("v" + i);
        }
    }

    @Test
    void aPeersReadsOfRecordsInMemoryTakeNoStorageThread() {
        for (int i = 0; i < 20; i++) {
            assertThat(cluster.client(0).put("in-memory-" + i, ("v" + i).getBytes(), "2/2").statusCode()).isEqualTo(201);
        }
        double before = readsFromMemory(1);
        for (int i = 0; i < 20; i++) {
            assertThat(text(cluster.client(0).get("in-memory-" + i, "2/2"))).isEqualTo("v" + i);
        }
        // Node 1 coordinated none of these reads: each it answered from memory came in node 0's batches.
        assertThat(readsFromMemory(1) - before).isGreaterThanOrEqualTo(20);
    }

    private static double readsFromMemory(int node) {
        return cluster.bean(node, MeterRegistry.class).get("kvlab.storage.reads").tag("tier", "cache").functionCounter().count();
    }
}
