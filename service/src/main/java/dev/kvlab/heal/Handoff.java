package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.Leaving;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.storage.LocalStore;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Keeps every record on its owners as the topology changes, and decides when to sweep: a sweep
 * ({@link OwnershipSweep}) runs {@code settle} after the topology changed (so that a change seen
 * in passes is taken whole), every {@code interval}, and again soon after one that could not reach
 * an owner. The old copy of a record stays until its new owners hold it.
 *
 * <p>A node that leaves on purpose ({@link #leave}) makes passes instead, until it stops
 * ({@link LeaveHandover}). It takes no copy back of a record it holds already ({@link Leaving}):
 * the other nodes' sweeps, which still count it an owner, keep the copies it handed them.
 */
public final class Handoff implements BackgroundWork, Leaving {

    private static final Logger log = LoggerFactory.getLogger(Handoff.class);

    private final TopologyHistory topology;
    private final HealingProperties.Handoff settings;
    private final LongSupplier wallMillis;
    private final DeletionHold hold;
    private final OwnershipSweep sweeps;
    private final LeaveHandover leave;
    private volatile long sweptTopologyMillis = -1;
    private volatile long nextSweepMillis;
    private Disposable ticks;

    public Handoff(TopologyHistory topology, LocalStore store, ReplicaDirectory replicas, MemoryBudget budget, TombstoneGrace grace,
                   RepairService repair, HealingProperties healing, LongSupplier wallMillis) {
        this.topology = topology;
        this.settings = healing.handoff();
        this.wallMillis = wallMillis;
        this.hold = new DeletionHold(wallMillis);
        RecordSender sender = new RecordSender(store, replicas, budget);
        this.sweeps = new OwnershipSweep(topology, store, sender, grace, repair, healing, hold, wallMillis);
        this.leave = new LeaveHandover(topology, store, sender, sweeps, wallMillis);
    }

    @Override
    public void start() {
        ticks = Ticks.every(Duration.ofSeconds(1), this::sweepIfDue, log, "handoff");
    }

    /** The next sweep, if one is due; while leaving, the next pass. */
    Mono<Void> sweepIfDue() {
        return Mono.defer(() -> {
            long now = wallMillis.getAsLong();
            if (leave.leaving() != null) {
                return leave.pass();
            }
            long changed = topology.changedMillis();
            boolean topologyChanged = changed != sweptTopologyMillis && now >= changed + settings.settle().toMillis();
            if (!topologyChanged && now < nextSweepMillis) {
                return Mono.empty();
            }
            Topology current = topology.current();
            return sweep(current, current.ownership(), false).doOnNext(sweep -> {
                sweptTopologyMillis = changed;
                nextSweepMillis = now + (sweep.failed() > 0 ? RepairService.RETRY_AFTER_FAILURE : settings.interval()).toMillis();
            }).then();
        });
    }

    /** One sweep now ({@link OwnershipSweep#sweep}). */
    Mono<Sweep> sweep(Topology current, Ownership target, boolean keepCopies) {
        return sweeps.sweep(current, target, keepCopies, key -> { });
    }

    /**
     * Starts to hand this node's records to their owners in {@code remaining}, the nodes that stay;
     * the passes go on until the node stops.
     */
    public Leave leave(List<String> remaining) {
        return leave.leave(remaining);
    }

    /** A leaving node's last pass as it stops ({@link LeaveHandover#lastPass}); empty when not leaving. */
    public Mono<Sweep> lastPass() {
        return leave.lastPass();
    }

    /** The last pass as the node stops, within {@code timeout}; {@code done} runs once it ended or gave up. */
    void lastPass(Duration timeout, Runnable done) {
        lastPass()
                .timeout(timeout)
                .doFinally(signal -> done.run())
                .subscribe(sweep -> { }, error -> log.warn("leaving: the last pass did not end: {}", error.toString()));
    }

    /**
     * Keeps the records handed to their new owners here, for {@code backup}, until released or
     * {@code untilMillis}; they are deleted by a sweep after that. The backup holding already, when
     * another one holds (nothing changes then).
     */
    public String holdDeletions(String backup, long untilMillis) {
        return hold.hold(backup, untilMillis);
    }

    /** Ends {@code backup}'s hold; nothing happens when another one holds. */
    public void releaseDeletions(String backup) {
        hold.release(backup);
    }

    /** The backup holding the deletion of moved records now, or null. */
    public String deletionsHeldFor() {
        return hold.holder();
    }

    /** The sweep running now, or null. */
    public Sweep running() {
        return sweeps.running();
    }

    /** The last sweep finished, or null. */
    public Sweep last() {
        return sweeps.last();
    }

    /** The leave under way, or null. */
    public Leave leaving() {
        return leave.leaving();
    }

    @Override
    public boolean isLeaving() {
        return leave.leaving() != null;
    }

    /** Records deleted here once their owners held them, since the node started. */
    public long moved() {
        return sweeps.moved();
    }

    /** Tombstones purged since the node started. */
    public long purged() {
        return sweeps.purged();
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
    }
}
