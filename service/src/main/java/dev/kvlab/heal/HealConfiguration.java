package dev.kvlab.heal;

import dev.kvlab.backup.BackupCoordinator;
import dev.kvlab.backup.BackupStatus;
import dev.kvlab.backup.BackupThread;
import dev.kvlab.backup.ConfiguredTarget;
import dev.kvlab.cluster.ServingNodes;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.cluster.WallClock;
import dev.kvlab.lifecycle.LifecycleStep;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.MembershipClient;
import dev.kvlab.peer.RepairClient;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.replication.ReplicationProperties;
import dev.kvlab.storage.LocalStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How the cluster heals itself and follows its topology: hints of missed writes, replayed;
 * anti-entropy repair rounds between replicas; records handed to their owners as the topology
 * changes, and tombstones purged once repair has covered them.
 */
@Configuration(proxyBeanMethods = false)
public class HealConfiguration {

    @Bean
    HintStore hintStore(LocalStore store, MemoryBudget budget, HealingProperties properties, WallClock clock, MeterRegistry registry) {
        HintStore hints = new HintStore(store, budget, properties.hints(), clock);
        hints.load();
        Gauge.builder("kvlab.hints.pending", hints, HintStore::pendingCount)
                .description("Hints of missed writes kept for peers, not replayed yet")
                .register(registry);
        FunctionCounter.builder("kvlab.hints.written", hints, HintStore::written)
                .description("Hints kept of writes peers missed (their calls failed or timed out)")
                .register(registry);
        FunctionCounter.builder("kvlab.hints.dropped", hints, HintStore::dropped)
                .description("Hints not kept: a peer's share full, a peer away longer than kvlab.heal.hints.window, or no memory")
                .register(registry);
        return hints;
    }

    @Bean(destroyMethod = "close")
    HintReplayer hintReplayer(HintStore hints, TopologyProvider topology, ReplicaDirectory replicas, MemoryBudget budget,
                              HealingProperties properties, MeterRegistry registry) {
        HintReplayer replayer = new HintReplayer(hints, topology, replicas, budget, properties.hints());
        FunctionCounter.builder("kvlab.hints.replayed", replayer, HintReplayer::replayed)
                .description("Hints replayed to the peers that had missed them")
                .register(registry);
        return replayer;
    }

    @Bean(destroyMethod = "close")
    TopologyHistory topologyHistory(TopologyProvider topology, LocalStore store, WallClock clock, HealingProperties properties) {
        return new TopologyHistory(topology, store, clock, properties.handoff().window()).load();
    }

    @Bean
    TombstoneGrace tombstoneGrace(HealingProperties properties, ReplicationProperties replication, WallClock clock) {
        return new TombstoneGrace(properties.repair().tombstoneGrace(), replication.timeout(), clock);
    }

    @Bean(destroyMethod = "close")
    RepairService repairService(TopologyHistory topology, LocalStore store, ReplicaDirectory replicas, RepairClient client,
                                MemoryBudget budget, HealingProperties properties, TombstoneGrace grace, WallClock clock,
                                MeterRegistry registry) {
        RepairService repair = new RepairService(topology, store, replicas, client, budget, properties.repair(), grace, clock);
        FunctionCounter.builder("kvlab.repair.rounds", repair, RepairService::roundsComplete)
                .description("Repair rounds this node ran with its peers, by outcome").tag("outcome", "complete").register(registry);
        FunctionCounter.builder("kvlab.repair.rounds", repair, RepairService::roundsFailed)
                .description("Repair rounds this node ran with its peers, by outcome").tag("outcome", "failed").register(registry);
        FunctionCounter.builder("kvlab.repair.records.read", repair, RepairService::recordsRead)
                .description("Records read from the store for repair rounds, this node's and its peers'").register(registry);
        FunctionCounter.builder("kvlab.repair.keys.compared", repair, RepairService::keysCompared)
                .description("Keys of differing buckets compared one by one in repair rounds").register(registry);
        FunctionCounter.builder("kvlab.repair.records", repair, RepairService::recordsSent)
                .description("Records that differed, copied by repair rounds, by direction").tag("direction", "sent").register(registry);
        FunctionCounter.builder("kvlab.repair.records", repair, RepairService::recordsReceived)
                .description("Records that differed, copied by repair rounds, by direction").tag("direction", "received").register(registry);
        return repair;
    }

    @Bean(destroyMethod = "close")
    Handoff handoff(TopologyHistory topology, LocalStore store, ReplicaDirectory replicas, MemoryBudget budget, TombstoneGrace grace,
                    RepairService repair, HealingProperties properties, WallClock clock, MeterRegistry registry) {
        Handoff handoff = new Handoff(topology, store, replicas, budget, grace, repair, properties, clock);
        FunctionCounter.builder("kvlab.handoff.records.moved", handoff, Handoff::moved)
                .description("Records deleted here once the owners they were handed to held them").register(registry);
        FunctionCounter.builder("kvlab.tombstones.purged", handoff, Handoff::purged)
                .description("Tombstones purged once their grace ended and repair covered them").register(registry);
        Gauge.builder("kvlab.handoff.leaving", handoff, h -> h.leaving() == null ? 0 : 1)
                .description("1 while this node leaves the cluster, handing its records to the nodes that stay").register(registry);
        return handoff;
    }

    @Bean(destroyMethod = "close")
    PeerMetrics peerMetrics(TopologyHistory topology, HintStore hints, RepairService repair, MeterRegistry registry) {
        return new PeerMetrics(topology, hints, repair, registry);
    }

    /**
     * Replaying hints, repair, handoff, watching the topology and following it in the metrics run
     * while the node serves: they start once the servers listen, and stop first when the node stops.
     */
    @Bean
    LifecycleStep backgroundLifecycle(HintReplayer hints, TopologyHistory topology, RepairService repair, Handoff handoff,
                                      PeerMetrics peerMetrics, MembershipNotices membership, JoiningProbe joiningProbe) {
        List<BackgroundWork> work = List.of(topology, hints, repair, handoff, peerMetrics, membership, joiningProbe);
        return LifecycleStep.of(LifecycleStep.BACKGROUND_WORK, () -> work.forEach(BackgroundWork::start),
                () -> work.forEach(BackgroundWork::close));
    }

    @Bean(destroyMethod = "close")
    MembershipNotices membershipNotices(TopologyProvider topology, MembershipClient peers, Handoff handoff) {
        return new MembershipNotices(topology, peers, handoff);
    }

    /** Nodes new to the listing are taken into the topology as soon as they answer, asked every second. */
    @Bean(destroyMethod = "close")
    JoiningProbe joiningProbe(ServingNodes serving, MembershipClient peers, MeterRegistry registry) {
        Gauge.builder("kvlab.cluster.joining", serving, nodes -> nodes.joining().size())
                .description("Nodes listed since this node started and not yet seen to serve: out of its topology until they do")
                .register(registry);
        return new JoiningProbe(serving, peers::answers, Duration.ofSeconds(1));
    }

    /** A node whose leave is finished tells its peers as it begins to stop, so they take it out of their topology at once. */
    @Bean
    LifecycleStep leftNotice(MembershipNotices membership) {
        return LifecycleStep.onStopAsync(LifecycleStep.LEFT_NOTICE, membership::leftAsStopping);
    }

    /**
     * A leaving node's last pass ({@link Handoff#lastPass}), once its client and replica ports have
     * drained, so it takes no more writes, and before they close and the event loops and the store
     * go; bounded by the shutdown phase's timeout.
     */
    @Bean
    LifecycleStep lastHandover(Handoff handoff, @Value("${spring.lifecycle.timeout-per-shutdown-phase:20s}") Duration timeout) {
        return LifecycleStep.onStopAsync(LifecycleStep.LAST_HANDOVER, done -> handoff.lastPass(timeout, done));
    }

    @Bean
    ClusterEndpoint clusterEndpoint(TopologyHistory topology, HintStore hints, RepairService repair, Handoff handoff,
                                    HealingProperties properties, BackupCoordinator backups, BackupStatus backupStatus,
                                    ConfiguredTarget backupTarget, BackupThread backupThread) {
        return new ClusterEndpoint(topology, hints, repair, handoff, properties, backups, backupStatus, backupTarget, backupThread);
    }
}
