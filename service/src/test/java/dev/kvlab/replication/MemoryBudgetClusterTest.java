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
 * Each node keeps a share of its budget for its peers' requests (the default
 * {@code kvlab.memory.replica-share}), which the requests it coordinates cannot take.
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
        // Room for its own record, not for the two peers' answers: refused before they are asked.
        MemoryBudget.Lease taken = take(coordinating(0), VALUE + 100);
        try {
            HttpResponse<byte[]> refused = cluster.client(0).get("large", "3/3");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(text(refused)).startsWith("the node already holds values").contains("kvlab.memory.max-bytes-in-flight", "retry later");
        } finally {
            taken.release();
        }
        assertThat(cluster.client(0).get("large", "3/3").body()).isEqualTo(filled('v'));
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(cluster.bean(0, MemoryBudget.class).held()).as("every answer's bytes given back").isZero());
    }

    @Test
    void aReplicaWithNoRoomForTheRecordItWouldReadRefusesItsCallAndTheOthersStillMakeTheQuorum() {
        MemoryBudget.Lease taken = take(coordinating(1).forReplicaWork(), VALUE / 2);
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
        MemoryBudget.Lease taken = take(coordinating(0), 2 * VALUE);
        try {
            HttpResponse<byte[]> refused = cluster.client(0).put("refused-copies", filled('r'), "3/3");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(cluster.holders("refused-copies")).as("nothing was stored anywhere").isEmpty();
        } finally {
            taken.release();
        }
        assertThat(cluster.client(0).put("refused-copies", filled('r'), "3/3").statusCode()).isEqualTo(201);
    }

    @Test
    void aNodeWhoseOwnRequestsHoldAllTheirRoomStillServesItsPeersReads() {
        // Every node's coordinating share full, as under a burst of reads each holding room for
        // its answers: the peers' reads of node 0's request still find room on nodes 1 and 2.
        MemoryBudget.Lease first = take(coordinating(1), 0);
        MemoryBudget.Lease second = take(coordinating(2), 0);
        try {
            HttpResponse<byte[]> read = cluster.client(0).get("large", "3/3");
            assertThat(read.statusCode()).as(text(read)).isEqualTo(200);
            assertThat(read.body()).isEqualTo(filled('v'));
        } finally {
            first.release();
            second.release();
        }
    }

    private static MemoryBudget coordinating(int node) {
        return cluster.bean(node, MemoryBudget.class);
    }

    /**
     * Takes all but {@code left} bytes of {@code budget}, as requests in flight would, once the
     * requests of the tests before have given theirs back.
     */
    private static MemoryBudget.Lease take(MemoryBudget budget, long left) {
        await().atMost(Duration.ofSeconds(5)).until(() -> budget.held() == 0);
        MemoryBudget.Lease lease = budget.lease();
        lease.hold(budget.limit() - left);
        return lease;
    }

    private static byte[] filled(char c) {
        byte[] value = new byte[VALUE];
        Arrays.fill(value, (byte) c);
        return value;
    }
}
