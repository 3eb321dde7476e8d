package dev.kvlab.replication;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Values a coordinator or a replica has no room for are refused with 503 and a message, never held
 * past the node's budget: the budget is taken up by hand here, so the tests see each path in turn.
 */
class MemoryBudgetClusterTest {

    static final int VALUE = 64 * 1024;
    static final long BUDGET = 400 * 1024;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(3, Map.of("kvlab.replication.timeout", "2s", "kvlab.api.max-value-size", "64KB",
                "kvlab.memory.max-bytes-in-flight", BUDGET + "B"));
        assertThat(cluster.client(0).put("large", filled('v'), "3/3").statusCode()).isEqualTo(201);
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aCoordinatorWithNoRoomForItsReplicasAnswersRefusesTheReadWith503() {
        MemoryBudget.Lease taken = take(0, BUDGET - VALUE - 100);
        try {
            HttpResponse<byte[]> refused = cluster.client(0).get("large", "3/3");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(text(refused)).contains("kvlab.memory.max-bytes-in-flight", "retry later");
        } finally {
            taken.release();
        }
        assertThat(cluster.client(0).get("large", "3/3").body()).isEqualTo(filled('v'));
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(cluster.bean(0, MemoryBudget.class).held()).as("every answer's bytes given back").isZero());
    }

    @Test
    void aReplicaWithNoRoomForTheRecordItWouldReadRefusesItsCallAndTheOthersStillMakeTheQuorum() {
        MemoryBudget.Lease taken = take(1, BUDGET - VALUE / 2);
        try {
            HttpResponse<byte[]> all = cluster.client(0).get("large", "3/3");
            assertThat(all.statusCode()).isEqualTo(503);
            assertThat(text(all)).contains("refused the call", "kvlab.memory.max-bytes-in-flight");
            assertThat(cluster.client(0).get("large", "2/3").body()).as("two other replicas answer").isEqualTo(filled('v'));
        } finally {
            taken.release();
        }
    }

    @Test
    void aWriteWithNoRoomForItsCopiesToThePeersIsRefusedBeforeAnyIsSent() {
        MemoryBudget.Lease taken = take(0, BUDGET - 2 * VALUE);
        try {
            HttpResponse<byte[]> refused = cluster.client(0).put("refused-copies", filled('r'), "3/3");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(cluster.holders("refused-copies")).as("nothing was stored anywhere").isEmpty();
        } finally {
            taken.release();
        }
        assertThat(cluster.client(0).put("refused-copies", filled('r'), "3/3").statusCode()).isEqualTo(201);
    }

    /**
     * Takes {@code bytes} of node {@code node}'s budget, as requests in flight would, once the
     * requests of the tests before have given theirs back.
     */
    private static MemoryBudget.Lease take(int node, long bytes) {
        MemoryBudget budget = cluster.bean(node, MemoryBudget.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> budget.held() == 0);
        MemoryBudget.Lease lease = budget.lease();
        lease.hold(bytes);
        return lease;
    }

    private static byte[] filled(char c) {
        byte[] value = new byte[VALUE];
        Arrays.fill(value, (byte) c);
        return value;
    }
}
