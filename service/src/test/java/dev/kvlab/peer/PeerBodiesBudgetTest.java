package dev.kvlab.peer;

import static dev.kvlab.testing.KvClient.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.StoreOp;
import dev.kvlab.storage.Version;
import dev.kvlab.testing.InProcessCluster;
import dev.kvlab.testing.KvClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A peer's batch and repair bodies, and a stream's frames, are read on the node's memory budget: beyond it, 503 and nothing stored. */
class PeerBodiesBudgetTest {

    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = InProcessCluster.start(1, Map.of("kvlab.api.max-value-size", "64KB", "kvlab.memory.max-bytes-in-flight", "128KB"));
    }

    @AfterAll
    static void stopCluster() {
        cluster.close();
    }

    @Test
    void aBatchBodyBeyondTheBudgetIsRefusedWith503AndNothingIsStored() {
        List<StoreOp> ops = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            byte[] value = Record.newValueArray(50 * 1024);
            ops.add(new StoreOp.Write(("over-budget-" + i).getBytes(StandardCharsets.UTF_8),
                    Record.value(new Version(System.currentTimeMillis(), 1), value)));
        }

        HttpResponse<byte[]> refused = cluster.client(0).send("POST", ReplicaProtocol.BATCH_PATH,
                BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(ops)));

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(text(refused)).contains("kvlab.memory.max-bytes-in-flight");
        for (int i = 0; i < 4; i++) {
            assertThat(cluster.client(0).internalRecord("over-budget-" + i).statusCode()).isEqualTo(404);
        }
        assertBudgetGivenBack();
    }

    @Test
    void aStreamFrameBeyondTheBudgetIsRefusedWith503AndNothingIsStored() {
        List<StoreOp> ops = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ops.add(new StoreOp.Write(("frame-over-budget-" + i).getBytes(StandardCharsets.UTF_8),
                    Record.value(new Version(System.currentTimeMillis(), 1), Record.newValueArray(50 * 1024))));
        }

        HttpResponse<byte[]> refused = cluster.client(0).send("POST", ReplicaProtocol.STREAM_PATH,
                BodyPublishers.ofByteArray(ReplicaBatch.frameCalls(ops)));

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(text(refused)).contains("kvlab.memory.max-bytes-in-flight");
        for (int i = 0; i < 4; i++) {
            assertThat(cluster.client(0).internalRecord("frame-over-budget-" + i).statusCode()).isEqualTo(404);
        }
        assertBudgetGivenBack();
    }

    @Test
    void aRepairBodyBeyondTheBudgetIsRefusedWith503() {
        HttpResponse<byte[]> refused = cluster.client(0).send("POST", ReplicaProtocol.REPAIR_BUCKETS_PATH,
                BodyPublishers.ofByteArray(new byte[200 * 1024]));

        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(text(refused)).contains("kvlab.memory.max-bytes-in-flight");
        assertBudgetGivenBack();
    }

    @Test
    void aBatchWithinTheBudgetIsTakenAndItsBytesGoBack() {
        List<StoreOp> ops = List.of(new StoreOp.Write("within-budget".getBytes(StandardCharsets.UTF_8),
                Record.value(new Version(System.currentTimeMillis(), 1), Record.newValueArray(40 * 1024))));

        assertThat(cluster.client(0).send("POST", ReplicaProtocol.BATCH_PATH, BodyPublishers.ofByteArray(ReplicaBatch.encodeCalls(ops)))
                .statusCode()).isEqualTo(200);

        assertThat(cluster.client(0).internalRecord("within-budget").statusCode()).isEqualTo(200);
        assertBudgetGivenBack();
    }

    private static void assertBudgetGivenBack() {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(cluster.bean(0, MemoryBudget.class).held()).as("the budget is given back").isZero());
    }
}
