package dev.kvlab.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.it.fixture.KvClient;
import dev.kvlab.it.fixture.KvlabCluster;
import dev.kvlab.it.history.History;
import dev.kvlab.it.history.ReplicaStates;
import dev.kvlab.it.history.Workload;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link SelfHealingIT} and {@link HealingSwitchedOffIT} share: a three-node cluster whose
 * healing is quick (or off), faults under a write-only 2/3 workload, and a look at every replica's
 * own records. No test here reads through the API after the fault heals: whatever mends the
 * replicas is the cluster's own background work.
 */
final class HealingScenarios {

    private static final Logger log = LoggerFactory.getLogger(HealingScenarios.class);

    /** Enough keys that the cut-off or stopped node misses the last write of many, not all. */
    static final int KEYS = 100;
    static final int CLIENTS = 6;
    /**
     * Clients while a node is cut off: each request that reaches the cut-off node waits the replica
     * timeout (2 s) for its 504, so more clients keep the other two nodes busy.
     */
    static final int CLIENTS_WHILE_CUT_OFF = 12;
    /** A repair round with each peer every 2 s, hints replayed every second: healing within seconds. */
    static final Duration REPAIR_INTERVAL = Duration.ofSeconds(2);
    static final Duration HINT_REPLAY_INTERVAL = Duration.ofSeconds(1);

    private HealingScenarios() {
    }

    /**
     * Three nodes, replica timeout 2 s (as in {@link FaultHistoryIT}: a restarted node's first calls
     * are slow on 2 cores), hinted handoff and anti-entropy repair on or off.
     */
    static KvlabCluster cluster(boolean hints, boolean repair) {
        return KvlabCluster.ofSize(3)
                .withSetting("kvlab.replication.timeout", "2s")
                .withSetting("kvlab.heal.hints.enabled", Boolean.toString(hints))
                .withSetting("kvlab.heal.hints.replay-interval", HINT_REPLAY_INTERVAL.toMillis() + "ms")
                .withSetting("kvlab.heal.repair.enabled", Boolean.toString(repair))
                .withSetting("kvlab.heal.repair.interval", REPAIR_INTERVAL.toMillis() + "ms");
    }

    /** PUTs and DELETEs at 2/3 through every node by {@code clients} clients, no GET: no read repair can mend a replica. */
    static Workload writes(KvlabCluster cluster, History history, int clients) {
        return new Workload(cluster.clients(), history, clients, KEYS, "2/3", 20_000)
                .writesOnly()
                .pausingAfterFailures(Duration.ofMillis(100));
    }

    /**
     * {@code node} is stopped (SIGTERM) while the workload writes through the other two (a load
     * balancer takes it out of rotation) for 5 s; the workload ends, then the node starts again.
     * Nothing is written once it is back: a write then would overwrite on every replica what the
     * node missed, and make the replicas agree without any healing.
     */
    static void stoppedWhileWritten(KvlabCluster cluster, Workload workload, int node) throws InterruptedException {
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(1));
            workload.takeOutOfRotation(node);
            cluster.stopNode(node);
            pause(Duration.ofSeconds(5));
        }
        logHintsPending(cluster, node);
        cluster.startNode(node);
    }

    /**
     * {@code node} is cut off the cluster's network while the workload writes through all three
     * for 8 s (clients still reach the cut-off node: its writes are stored there and nowhere else);
     * the workload ends, then the node is reconnected. Nothing is written once it is back, as in
     * {@link #stoppedWhileWritten}.
     */
    static void cutOffWhileWritten(KvlabCluster cluster, Workload workload, int node) throws InterruptedException {
        cluster.disconnectNode(node);
        try (workload) {
            workload.start();
            pause(Duration.ofSeconds(8));
        } finally {
            logHintsPending(cluster, node);
            cluster.reconnectNode(node);
        }
    }

    /**
     * Writes {@code key} at {@code replicas} until it is acknowledged: a node started a moment ago
     * may answer its first replica calls late (504), and a write tried again is the same write.
     */
    static void putAcknowledged(KvClient client, String key, String value, String replicas) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            var response = client.put(key, value, replicas);
            if (response.statusCode() == 201) {
                return;
            }
            assertThat(response.statusCode()).as("PUT %s at %s: %s", key, replicas, KvClient.text(response)).isEqualTo(504);
            assertThat(System.nanoTime()).as("PUT %s at %s still 504 after 30 s", key, replicas).isLessThan(deadline);
            pause(Duration.ofMillis(200));
        }
    }

    /** Every node's own record of every key. */
    static ReplicaStates replicaStates(KvlabCluster cluster, List<String> keys) {
        List<Integer> nodes = IntStream.range(0, cluster.size()).boxed().toList();
        return ReplicaStates.read(nodes.stream().map(cluster::alias).toList(), nodes.stream().map(cluster::replica).toList(), keys);
    }

    /**
     * Looks at the replicas every 500 ms until every one holds the same record of every key; fails
     * after {@code timeout}, listing the keys on which they still differ.
     */
    static ReplicaStates awaitConvergence(KvlabCluster cluster, List<String> keys, Duration timeout) throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        while (true) {
            ReplicaStates states = replicaStates(cluster, keys);
            List<String> divergences = states.divergences();
            if (divergences.isEmpty()) {
                log.info("replicas of {} keys converged {} ms after the workload ended", keys.size(), (System.nanoTime() - started) / 1_000_000);
                return states;
            }
            if (System.nanoTime() > deadline) {
                assertThat(divergences).as("keys whose replicas still differ %s after the workload ended", timeout).isEmpty();
            }
            pause(Duration.ofMillis(500));
        }
    }

    /** Hints replayed plus records copied by repair rounds (sent and received), node by node. */
    static double[] healedRecords(KvlabCluster cluster) {
        double[] healed = new double[cluster.size()];
        for (int node = 0; node < cluster.size(); node++) {
            healed[node] = cluster.metric(node, "kvlab_hints_replayed_total") + cluster.metric(node, "kvlab_repair_records_total");
        }
        return healed;
    }

    /**
     * The records replayed from hints or copied by repair since {@code before} ({@link #healedRecords}), every node
     * together. A node that restarted since counts from zero, as Prometheus' increase() treats a counter that went down.
     */
    static double healedSince(KvlabCluster cluster, double[] before) {
        double[] now = healedRecords(cluster);
        double healed = 0;
        for (int node = 0; node < now.length; node++) {
            healed += now[node] >= before[node] ? now[node] - before[node] : now[node];
        }
        return healed;
    }

    /** Repair's records sent by every node and received by every node, as {@code [sent, received]}. */
    static double[] repairRecords(KvlabCluster cluster) {
        double sent = 0;
        double received = 0;
        for (int node = 0; node < cluster.size(); node++) {
            sent += cluster.metric(node, "kvlab_repair_records_total", "direction=\"sent\"");
            received += cluster.metric(node, "kvlab_repair_records_total", "direction=\"received\"");
        }
        return new double[] {sent, received};
    }

    /** How many hints the other nodes keep for {@code node}, for the log: what it missed. */
    static long hintsPendingFor(KvlabCluster cluster, int node) {
        long pending = 0;
        for (int other = 0; other < cluster.size(); other++) {
            if (other != node) {
                pending += cluster.clusterStatus(other).path("hints").path(cluster.url(node)).path("pending").asLong(0);
            }
        }
        return pending;
    }

    private static void logHintsPending(KvlabCluster cluster, int node) {
        log.info("hints kept for {} by its peers: {}", cluster.alias(node), hintsPendingFor(cluster, node));
    }

    static List<KvClient> replicas(KvlabCluster cluster) {
        return IntStream.range(0, cluster.size()).mapToObj(cluster::replica).toList();
    }

    static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration);
    }
}
