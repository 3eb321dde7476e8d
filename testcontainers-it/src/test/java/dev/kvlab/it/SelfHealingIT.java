package dev.kvlab.it;

import static dev.kvlab.it.HealingScenarios.awaitConvergence;
import static dev.kvlab.it.HealingScenarios.healedRecords;
import static dev.kvlab.it.HealingScenarios.healedSince;
import static dev.kvlab.it.HealingScenarios.repairRecords;
import static dev.kvlab.it.history.HistoryAssertions.assertNoViolations;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient.ReplicaRecord;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.Operation;
import dev.kvlab.it.history.ReplicaStates;
import dev.kvlab.it.history.Workload;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The cluster mends itself with no client read to show it the way: after a node was stopped or cut
 * off while keys were written and deleted at 2/3, or lost its whole volume, every replica ends up
 * holding the newest record of every key, tombstones included, as each replica's own records show
 * (read with the replica protocol, not through a coordinator). Hinted handoff and anti-entropy
 * repair run as configured for a quick test: hints replayed every second, a repair round every 2 s.
 *
 * <p>That it is their doing and not something else: {@link HealingSwitchedOffIT} runs the same
 * faults with both switched off, and the replicas stay apart; nothing is written once the node is
 * back, so no later write can make the replicas agree by overwriting what the node missed.
 */
@Testcontainers
class SelfHealingIT {

    private static final Logger log = LoggerFactory.getLogger(SelfHealingIT.class);
    /** Far more than healing takes (a few seconds): a failure here is healing that does not happen. */
    static final Duration CONVERGENCE_TIMEOUT = Duration.ofSeconds(60);

    /**
     * Both on, as the nodes' defaults have them. {@code -Dkvlab.it.heal.hints=false} or
     * {@code -Dkvlab.it.heal.repair=false} switch one off by hand, to see what each does alone
     * (with both off every test here fails).
     */
    @Container
    static final KvlabCluster cluster = HealingScenarios.cluster(
            Boolean.parseBoolean(System.getProperty("kvlab.it.heal.hints", "true")),
            Boolean.parseBoolean(System.getProperty("kvlab.it.heal.repair", "true")));

    @AfterEach
    void everyNodeRunning() {
        cluster.startStoppedNodes();
    }

    @Test
    void aStoppedNodeGetsEveryWriteAndDeleteItMissedWithoutAClientRead() throws Exception {
        convergesWithoutAClientRead(HealingScenarios.CLIENTS, workload -> HealingScenarios.stoppedWhileWritten(cluster, workload, 2));
    }

    @Test
    void aNodeCutOffAndItsPeersConvergeWithoutAClientRead() throws Exception {
        convergesWithoutAClientRead(HealingScenarios.CLIENTS_WHILE_CUT_OFF,
                workload -> HealingScenarios.cutOffWhileWritten(cluster, workload, 2));
    }

    /** What node 2 misses while {@code fault} keeps it away from a workload of {@code clients}. */
    interface Fault {
        void during(Workload workload) throws InterruptedException;
    }

    /** Node 2, kept away by {@code fault} while keys are written and deleted, ends with every replica on the newest. */
    private void convergesWithoutAClientRead(int clients, Fault fault) throws Exception {
        History history = new History();
        Workload workload = HealingScenarios.writes(cluster, history, clients);
        double[] healedBefore = healedRecords(cluster);

        fault.during(workload);
        log.info("node-2 back: it is behind on {} of {} keys", HealingScenarios.replicaStates(cluster, workload.keys()).behindOn(2),
                workload.keys().size());

        ReplicaStates states = awaitConvergence(cluster, workload.keys(), CONVERGENCE_TIMEOUT);
        assertConvergedOnTheNewest(history, states);
        assertThat(healedSince(cluster, healedBefore)).as("records replayed from hints or copied by repair").isPositive();
    }

    @Test
    void aNodeOnAWipedVolumeIsRefilledWithEveryKeyWrittenAtThreeOfThree() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        List<String> keys = IntStream.range(0, 300).mapToObj(i -> "wiped-" + run + "-" + i).toList();
        for (int i = 0; i < keys.size(); i++) {
            HealingScenarios.putAcknowledged(cluster.client(i % 3), keys.get(i), "value " + i, "3/3");
        }
        double sentBefore = repairRecords(cluster)[0] - cluster.metric(1, "kvlab_repair_records_total", "direction=\"sent\"");

        cluster.wipeNode(1);

        var replica = cluster.replica(1);
        long heldAtStart = keys.stream().filter(key -> !replica.replicaRecord(key).absent()).count();
        log.info("the wiped node held {} of the {} keys once it answered", heldAtStart, keys.size());
        long deadline = System.nanoTime() + CONVERGENCE_TIMEOUT.toNanos();
        List<String> missing;
        do {
            Thread.sleep(500);
            missing = IntStream.range(0, keys.size())
                    .filter(i -> !replica.replicaRecord(keys.get(i)).equals(new ReplicaRecord(
                            cluster.replica(0).replicaRecord(keys.get(i)).version(), false, "value " + i)))
                    .mapToObj(keys::get)
                    .toList();
        } while (!missing.isEmpty() && System.nanoTime() < deadline);
        assertThat(missing).as("keys the wiped node does not hold as its peers do, %s after it started", CONVERGENCE_TIMEOUT).isEmpty();

        // Node 1's counters began with its new container; its peers' are counted from before the wipe.
        double received = cluster.metric(1, "kvlab_repair_records_total", "direction=\"received\"");
        double sentByPeers = repairRecords(cluster)[0] - cluster.metric(1, "kvlab_repair_records_total", "direction=\"sent\"") - sentBefore;
        assertThat(received + sentByPeers).as("records copied to the wiped node by repair rounds").isGreaterThanOrEqualTo(keys.size());
    }

    /**
     * Every replica holds the same record of every key (the newest: repair and hints copy only
     * newer ones), and what they hold is what the history allows: each key's last acknowledged
     * write or a later or concurrent one, never an older value, never a deleted one.
     */
    private static void assertConvergedOnTheNewest(History history, ReplicaStates states) {
        long puts = history.count(Operation.Type.PUT, Operation.Outcome.OK);
        long deletes = history.count(Operation.Type.DELETE, Operation.Outcome.OK);
        log.info("{} acknowledged PUTs, {} acknowledged DELETEs, {} writes not acknowledged", puts, deletes,
                history.count(Operation.Type.PUT, Operation.Outcome.UNKNOWN) + history.count(Operation.Type.DELETE, Operation.Outcome.UNKNOWN));
        // Few while a node is cut off: every request that reaches it waits the replica timeout.
        assertThat(puts).as("acknowledged writes").isGreaterThanOrEqualTo(20);
        assertThat(deletes).as("acknowledged deletes").isGreaterThanOrEqualTo(3);
        assertThat(states.divergences()).isEmpty();
        assertThat(states.records().values()).as("keys with a tombstone on every replica")
                .anyMatch(held -> held.stream().allMatch(ReplicaRecord::tombstone));
        states.recordAsReads(history);
        assertNoViolations(history);
    }
}
