package dev.kvlab.it;

import static dev.kvlab.it.history.HistoryAssertions.assertNoViolations;
import static dev.kvlab.it.history.HistoryAssertions.readEverythingBack;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.fixture.Owners;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.Operation;
import dev.kvlab.it.history.Workload;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import tools.jackson.databind.JsonNode;

/**
 * The static node list grows from 3 to 4 and shrinks back to 3 under a concurrent 2/3 workload, as
 * a user of a static list changes it: every node is redeployed with the new list at once (nodes
 * that reckon by different lists would ask different replicas, so no rolling change), and before
 * the list shrinks, the node that goes is asked to leave and the operator waits until it has
 * handed its records over. The workload's history must show no acknowledged write lost and no
 * deleted value back; keys written before at 1/1, 2/2, 2/3 and 3/3 must read back at the replicas
 * they were written with, and end up on exactly their owners in the final list.
 */
@Testcontainers
class TopologyChangeIT {

    private static final Logger log = LoggerFactory.getLogger(TopologyChangeIT.class);
    static final String[] REPLICAS = {"1/1", "2/2", "2/3", "3/3"};
    static final int KEYS = 200;
    static final Duration SETTLING = Duration.ofSeconds(60);

    /** Records move 1 s after a change; repair and handoff sweeps every 5 s, hints replayed every second. */
    @Container
    static final KvlabCluster cluster = KvlabCluster.ofSize(3).withRoomFor(4)
            .withSetting("kvlab.replication.timeout", "2s")
            .withSetting("kvlab.heal.hints.replay-interval", "1s")
            .withSetting("kvlab.heal.repair.interval", "5s")
            .withSetting("kvlab.heal.handoff.settle", "1s")
            .withSetting("kvlab.heal.handoff.interval", "5s");

    @Test
    void threeToFourToThreeNodesUnderAWorkloadLosesNoAcknowledgedWrite() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "moved-" + run + "-" + i).toList();
        for (int i = 0; i < KEYS; i++) {
            HealingScenarios.putAcknowledged(cluster.client(i % 3), keys.get(i), value(i), replicas(i));
        }

        History history = new History();
        List<KvClient> clients = IntStream.range(0, cluster.capacity()).mapToObj(cluster::client).toList();
        Workload workload = new Workload(clients, history, 6, 50, "2/3", 200_000).pausingAfterFailures(Duration.ofMillis(200));
        workload.takeOutOfRotation(3);
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(3));

            cluster.resize(4);
            workload.putBackInRotation(3);
            awaitHandoffAfterTheChange();
            everyKeyReadsBackAtItsReplicas(keys);
            pause(Duration.ofSeconds(2));

            // Node 3 leaves: it hands its records to the three that stay, then the list shrinks.
            var leave = cluster.management(3).postJson("/actuator/kvlab/leave", "{}", cluster.secret());
            assertThat(leave.statusCode()).as(KvClient.text(leave)).isEqualTo(200);
            awaitLeft(3);
            workload.takeOutOfRotation(3);
            cluster.resize(3);
            pause(Duration.ofSeconds(3));
        }

        readEverythingBack(history, cluster.clients(), workload.keys(), "2/3");
        log.info("history: {} operations, {} acknowledged writes, {} acknowledged deletes, {} reads", history.operations().size(),
                history.count(Operation.Type.PUT, Operation.Outcome.OK), history.count(Operation.Type.DELETE, Operation.Outcome.OK),
                history.count(Operation.Type.GET, Operation.Outcome.OK));
        assertThat(history.count(Operation.Type.PUT, Operation.Outcome.OK)).as("acknowledged writes").isGreaterThan(100);
        assertNoViolations(history);
        everyKeyReadsBackAtItsReplicas(keys);
        awaitEveryKeyOnExactlyItsOwners(keys);
    }

    /** Each key through each node, at the {@code ack/from} it was written with. */
    private static void everyKeyReadsBackAtItsReplicas(List<String> keys) {
        List<String> wrong = new ArrayList<>();
        for (int node = 0; node < cluster.size(); node++) {
            for (int i = 0; i < keys.size(); i++) {
                var read = cluster.client(node).get(keys.get(i), replicas(i));
                if (read.statusCode() != 200 || !KvClient.text(read).equals(value(i))) {
                    wrong.add(keys.get(i) + " at " + replicas(i) + " through " + cluster.alias(node) + ": " + read.statusCode() + " "
                            + KvClient.text(read));
                }
            }
        }
        assertThat(wrong).as("keys that do not read back on %d nodes", cluster.size()).isEmpty();
    }

    /** Each key is held by its owners in the list now and by no other node (read on each node's own replica). */
    private static void awaitEveryKeyOnExactlyItsOwners(List<String> keys) throws InterruptedException {
        long deadline = System.nanoTime() + SETTLING.toNanos();
        List<String> misplaced;
        while (true) {
            misplaced = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                List<String> owners = Owners.of(keys.get(i), from(i), cluster.urls());
                List<String> holders = new ArrayList<>();
                for (int node = 0; node < cluster.size(); node++) {
                    if (cluster.replica(node).replicaRecord(keys.get(i)).liveValue().filter(value(i)::equals).isPresent()) {
                        holders.add(cluster.url(node));
                    }
                }
                if (!holders.containsAll(owners) || holders.size() != owners.size()) {
                    misplaced.add(keys.get(i) + " at " + replicas(i) + ": owners " + owners + ", held by " + holders);
                }
            }
            if (misplaced.isEmpty() || System.nanoTime() > deadline) {
                break;
            }
            pause(Duration.ofSeconds(1));
        }
        assertThat(misplaced).as("keys not on exactly their owners %s after the last change", SETTLING).isEmpty();
    }

    /**
     * What a careful operator waits for before the next change: every node has swept its records
     * since the list changed (sent each one it no longer owns to its owners) and none failed.
     */
    private static void awaitHandoffAfterTheChange() throws InterruptedException {
        long deadline = System.nanoTime() + SETTLING.toNanos();
        for (int node = 0; node < cluster.size(); node++) {
            while (true) {
                JsonNode status = cluster.clusterStatus(node);
                Instant changed = Instant.parse(status.path("topology").path("changedAt").asString());
                JsonNode sweep = status.path("handoff").path("lastSweep");
                if (!sweep.isNull() && !sweep.isMissingNode() && !Instant.parse(sweep.path("started").asString()).isBefore(changed)
                        && sweep.path("failed").asLong() == 0) {
                    log.info("{}: handoff after the change: {}", cluster.alias(node), sweep);
                    break;
                }
                assertThat(System.nanoTime()).as("%s has not swept its records since the change: %s", cluster.alias(node),
                        status.path("handoff")).isLessThan(deadline);
                pause(Duration.ofMillis(500));
            }
        }
    }

    /** Until the leaving node has handed every record over once: a pass done, none failed. */
    private static void awaitLeft(int node) throws InterruptedException {
        long deadline = System.nanoTime() + SETTLING.toNanos();
        while (true) {
            JsonNode leaving = cluster.clusterStatus(node).path("handoff").path("leaving");
            if (leaving.path("passes").asInt(0) >= 1 && leaving.path("lastPass").path("failed").asLong(-1) == 0) {
                log.info("{} has handed its records over: {}", cluster.alias(node), leaving);
                return;
            }
            assertThat(System.nanoTime()).as("%s still leaving: %s", cluster.alias(node), leaving).isLessThan(deadline);
            pause(Duration.ofMillis(500));
        }
    }

    static String value(int i) {
        return "value " + i;
    }

    static String replicas(int i) {
        return REPLICAS[i % REPLICAS.length];
    }

    static int from(int i) {
        return Integer.parseInt(replicas(i).substring(2));
    }

    private static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration);
    }
}
