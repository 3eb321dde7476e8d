package dev.kvlab.it;

import static dev.kvlab.it.history.HistoryAssertions.assertNoViolations;
import static dev.kvlab.it.history.HistoryAssertions.readEverythingBack;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.Operation;
import dev.kvlab.it.history.Workload;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * Faults under a concurrent 2/3 workload, each run checked as a whole by the history checker: no
 * acknowledged write lost, no stale quorum read, no deleted value back.
 *
 * <p>The replica timeout is 2 s rather than 1 s: a restarted node's first calls are slow on a busy
 * 2-core machine, and these scenarios are about correctness, not latency.
 */
@Testcontainers
class FaultHistoryIT {

    static final int KEYS = 30;
    static final int CLIENTS = 6;

    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withSetting("kvlab.replication.timeout", "2s");

    @AfterEach
    void everyNodeRunning() {
        cluster.startStoppedNodes();
    }

    @Test
    void killMinus9InTheMiddleOfWritesLosesNoAcknowledgedWrite() throws Exception {
        History history = new History();
        Workload workload = new Workload(cluster.clients(), history, CLIENTS, KEYS, "2/3", 5_000);
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(3));
            cluster.killNode(1);
            pause(Duration.ofSeconds(4));
            cluster.startNode(1);
            pause(Duration.ofSeconds(3));
        }
        readEverythingBack(history, cluster.clients(), workload.keys(), "2/3");

        assertThat(history.count(Operation.Type.PUT, Operation.Outcome.OK)).as("acknowledged writes").isGreaterThan(100);
        assertNoViolations(history);
    }

    @Test
    void aNodeCutOffMissesWritesAndAfterRejoiningReadsAtThreeOfThreeAreNewest() throws Exception {
        History history = new History();
        Workload workload = new Workload(cluster.clients(), history, CLIENTS, KEYS, "2/3", 5_000);
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(2));
            cluster.disconnectNode(2);
            pause(Duration.ofSeconds(5));
            cluster.reconnectNode(2);
            pause(Duration.ofSeconds(2));
        }
        // Node 2 missed writes; a 3/3 read through it must still find the newest of each key.
        readEverythingBack(history, List.of(cluster.client(2)), workload.keys(), "3/3");

        assertThat(history.count(Operation.Type.PUT, Operation.Outcome.OK)).as("acknowledged writes").isGreaterThan(100);
        assertNoViolations(history);
    }

    @Test
    void restartingEveryNodeInTurnUnderTwoOfThreeTrafficFailsNoRequest() throws Exception {
        History history = new History();
        Workload workload = new Workload(cluster.clients(), history, CLIENTS, KEYS, "2/3", 20_000);
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(2));
            for (int node = 0; node < 3; node++) {
                // As a load balancer does: no new requests to the node, then a graceful stop.
                workload.takeOutOfRotation(node);
                pause(Duration.ofMillis(500));
                cluster.stopNode(node);
                cluster.startNode(node);
                pause(Duration.ofSeconds(2));
                workload.putBackInRotation(node);
                pause(Duration.ofSeconds(2));
            }
        }
        readEverythingBack(history, cluster.clients(), workload.keys(), "2/3");

        assertThat(history.operations()).as("failed requests during the rolling restart")
                .filteredOn(operation -> operation.outcome() == Operation.Outcome.UNKNOWN)
                .isEmpty();
        assertNoViolations(history);
    }

    private static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration);
    }
}
