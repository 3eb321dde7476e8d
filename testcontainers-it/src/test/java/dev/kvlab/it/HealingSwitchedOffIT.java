package dev.kvlab.it;

import static dev.kvlab.it.history.HistoryAssertions.CLOCK_RESOLUTION;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.HistoryChecker;
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
 * The control of {@link SelfHealingIT}: the same faults on a cluster with hinted handoff and
 * repair switched off. With no client read, nothing else mends a replica, so the replicas stay
 * apart, and {@link SelfHealingIT}'s checks see it: it is hints and repair that make them converge
 * there, and its checks can fail.
 */
@Testcontainers
class HealingSwitchedOffIT {

    private static final Logger log = LoggerFactory.getLogger(HealingSwitchedOffIT.class);
    /**
     * How long the replicas are given: 5 repair intervals and 10 hint replays of {@link SelfHealingIT}'s
     * cluster, where they converge within a few seconds.
     */
    static final Duration GRACE = Duration.ofSeconds(10);

    @Container
    static final KvlabCluster cluster = HealingScenarios.cluster(false, false);

    @AfterEach
    void everyNodeRunning() {
        cluster.startStoppedNodes();
    }

    @Test
    void withoutHintsAndRepairAStoppedNodeStaysBehind() throws Exception {
        History history = new History();
        Workload workload = HealingScenarios.writes(cluster, history, HealingScenarios.CLIENTS);

        HealingScenarios.stoppedWhileWritten(cluster, workload, 2);
        Thread.sleep(GRACE);

        ReplicaStates states = HealingScenarios.replicaStates(cluster, workload.keys());
        log.info("{} s after the workload: node-2 is behind on {} of {} keys", GRACE.toSeconds(), states.behindOn(2), workload.keys().size());
        assertThat(states.divergences()).as("keys whose replicas differ").isNotEmpty();
        assertThat(states.behindOn(2)).as("keys node-2 holds an older record of, or none").isPositive();
        // The history checker, given the replicas' records as reads, finds the writes node-2 lacks.
        states.recordAsReads(history);
        List<String> violations = new HistoryChecker(CLOCK_RESOLUTION).violations(history.operations());
        log.info("the history checker finds {} violations, such as: {}", violations.size(), violations.stream().findFirst().orElse("none"));
        assertThat(violations).isNotEmpty();
    }

    @Test
    void withoutRepairANodeOnAWipedVolumeStaysEmpty() throws Exception {
        String run = Long.toHexString(System.nanoTime() & 0xffffffL);
        List<String> keys = IntStream.range(0, 100).mapToObj(i -> "wiped-" + run + "-" + i).toList();
        for (int i = 0; i < keys.size(); i++) {
            HealingScenarios.putAcknowledged(cluster.client(i % 3), keys.get(i), "value " + i, "3/3");
        }

        cluster.wipeNode(1);
        Thread.sleep(GRACE);

        var replica = cluster.replica(1);
        assertThat(keys).as("keys on the wiped node %s s after it started", GRACE.toSeconds())
                .noneMatch(key -> !replica.replicaRecord(key).absent());
    }
}
