package dev.kvlab.heal;

import dev.kvlab.cluster.Topology;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.replication.Replica;
import dev.kvlab.replication.ReplicaDirectory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Replays hints ({@link HintStore}) to the peers that missed them, once they answer again: every
 * {@code replayInterval}, for each peer with hints, the oldest are sent as ordinary replica writes
 * (their versions make a replay that comes twice harmless) and forgotten once the peer took them.
 * A peer that fails stops its replay until the next tick. Throttled to {@code replayRate} bytes per
 * second per peer. Hints of a node that has left the topology are dropped: repair and the handoff
 * place its data now. A step's hints are held on the node's memory budget as they are read, until
 * the peer took them; a step that finds no room waits for the next tick.
 */
public final class HintReplayer implements BackgroundWork {

    private static final Logger log = LoggerFactory.getLogger(HintReplayer.class);
    /** Hints sent in one step at the most, in bytes. */
    private static final long STEP_BYTES = 256 * 1024;

    private final HintStore hints;
    private final TopologyProvider topology;
    private final ReplicaDirectory replicas;
    private final MemoryBudget budget;
    private final HealingProperties.Hints limits;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong replayed = new AtomicLong();
    private Disposable ticks;

    public HintReplayer(HintStore hints, TopologyProvider topology, ReplicaDirectory replicas, MemoryBudget budget,
                        HealingProperties.Hints limits) {
        this.hints = hints;
        this.topology = topology;
        this.replicas = replicas;
        this.budget = budget;
        this.limits = limits;
    }

    @Override
    public void start() {
        ticks = Ticks.every(limits.replayInterval(), this::replayAll, log, "replaying hints");
    }

    /** Replays the hints of every peer that has some; the next call waits for this one. */
    public Mono<Void> replayAll() {
        return Mono.defer(() -> {
            if (!running.compareAndSet(false, true)) {
                return Mono.empty();
            }
            Topology current = topology.current();
            return Flux.fromIterable(hints.pending().keySet())
                    .concatMap(node -> current.nodes().contains(node) && !node.equals(current.self())
                            ? replay(node, replicas.replicaOf(node, current))
                            : forget(node))
                    .then()
                    .doFinally(signal -> running.set(false));
        });
    }

    /** Steps of the peer's oldest hints, until none are left or the peer fails one. */
    private Mono<Void> replay(String node, Replica replica) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease), lease -> step(node, replica, lease), HintReplayer::released)
                .flatMap(bytes -> Mono.delay(Duration.ofMillis(bytes * 1000 / limits.replayRate().toBytes()))
                        .then(Mono.defer(() -> replay(node, replica))))
                .onErrorResume(failed -> {
                    if (failed instanceof OverBudgetException) {
                        log.debug("no room in the memory budget to replay {}'s hints now: {}", node, failed.getMessage());
                    } else {
                        log.debug("{} does not take its hints yet: {}", node, failed.toString());
                    }
                    return Mono.empty();
                });
    }

    /** One step: the peer's oldest hints, held on {@code lease}, sent, and forgotten once it took them; their bytes, or empty when none are left. */
    private Mono<Long> step(String node, Replica replica, MemoryBudget.Lease lease) {
        return hints.oldest(node, Math.min(STEP_BYTES, limits.replayRate().toBytes()), lease)
                .flatMap(step -> {
                    if (step.isEmpty()) {
                        return Mono.empty();
                    }
                    return Flux.fromIterable(step)
                            .flatMap(hint -> replica.write(hint.key(), hint.record()), 64)
                            .then(hints.remove(node, step))
                            .then(Mono.fromSupplier(() -> {
                                replayed.addAndGet(step.size());
                                log.debug("replayed {} hints to {}", step.size(), node);
                                return step.stream().mapToLong(Hint::encodedBytes).sum();
                            }));
                });
    }

    /** Drops the hints of a node that is no longer in the topology, a step at a time, each held on the budget as it is read. */
    private Mono<Void> forget(String node) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                        lease -> hints.oldest(node, STEP_BYTES, lease).flatMap(step -> step.isEmpty()
                                ? Mono.<Boolean>empty()
                                : hints.remove(node, step).thenReturn(true)),
                        HintReplayer::released)
                .flatMap(more -> forget(node));
    }

    private static Mono<Void> released(MemoryBudget.Lease lease) {
        return Mono.fromRunnable(lease::release);
    }

    /** Hints replayed since the node started. */
    public long replayed() {
        return replayed.get();
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
    }
}
