package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.storage.LocalStore;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A node leaving on purpose: it sends every record to its owners in the topology without it,
 * keeping its own copies (it serves until it stops), in passes again and again until it stops, and
 * forwards each write it takes meanwhile at once. The writes it took after its last pass began,
 * and those a pass could not send, go to their owners when it stops, once it takes no more
 * ({@link #lastPass}).
 */
final class LeaveHandover {

    /** Logs as the handoff, as it always has: operators filter and alert on that logger. */
    private static final Logger log = LoggerFactory.getLogger(Handoff.class);
    /** Writes a leaving node sends on at once; past it they wait for the next pass. */
    private static final int FORWARDS_IN_FLIGHT = 64;

    private final TopologyHistory topology;
    private final LocalStore store;
    private final RecordSender sender;
    private final OwnershipSweep sweeps;
    private final LongSupplier wallMillis;
    private volatile Leave leaving;
    /** While leaving: the writes sent on to their owners as they are stored, and how many are on their way. */
    private volatile Sweep forwarded;
    private final Semaphore forwardsInFlight = new Semaphore(FORWARDS_IN_FLIGHT);
    /** While leaving: the keys stored since the last pass began, and those a pass could not send. */
    private volatile Set<ByteBuffer> writtenSincePass = ConcurrentHashMap.newKeySet();
    /**
     * While leaving: the keys stored before the running pass began, which that pass covers; they
     * stay here until a pass ends (a pass cut short covers nothing). Sets kept as they are, not
     * copied: a key told a moment after the set was taken still counts.
     */
    private volatile List<Set<ByteBuffer>> coveredByPass = List.of();

    LeaveHandover(TopologyHistory topology, LocalStore store, RecordSender sender, OwnershipSweep sweeps, LongSupplier wallMillis) {
        this.topology = topology;
        this.store = store;
        this.sender = sender;
        this.sweeps = sweeps;
        this.wallMillis = wallMillis;
    }

    /**
     * Starts to hand this node's records to their owners in {@code remaining}, the nodes that stay;
     * the passes go on until the node stops.
     */
    Leave leave(List<String> remaining) {
        Topology current = topology.current();
        if (remaining.isEmpty() || remaining.contains(current.self()) || !current.nodes().containsAll(remaining)) {
            throw new IllegalArgumentException("a leaving node hands its records to nodes of the cluster other than itself, not to " + remaining);
        }
        Leave leave = leaving;
        if (leave == null) {
            // Before the first pass begins, so that it covers every key stored until then.
            forwarded = new Sweep(wallMillis.getAsLong());
            store.onWritten(key -> {
                byte[] copy = key.clone();
                writtenSincePass.add(ByteBuffer.wrap(copy));
                forward(copy);
            });
        }
        if (leave == null || !leave.remaining().equals(remaining)) {
            leave = new Leave(List.copyOf(remaining), wallMillis.getAsLong(), 0, null);
            leaving = leave;
            log.info("leaving the cluster: handing every record to its owners among {}", remaining);
        }
        return leave;
    }

    /** The leave under way, or null. */
    Leave leaving() {
        return leaving;
    }

    /**
     * Sends a write stored while leaving on to its owners among the nodes that stay, at once: the
     * node may be cut off or stopped before its next pass, and a stopping pod's network may already
     * be gone by its last one. The passes send it again, as they send every key written.
     */
    private void forward(byte[] key) {
        Leave leave = leaving;
        Sweep counted = forwarded;
        if (leave == null || counted == null || !forwardsInFlight.tryAcquire()) {
            return;
        }
        handOver(topology.current(), new Ownership(leave.remaining()), key, counted)
                .doFinally(signal -> forwardsInFlight.release())
                .subscribe();
    }

    /** One more pass of the leave under way; counted unless the leave changed meanwhile. */
    Mono<Void> pass() {
        Leave leave = leaving;
        if (leave == null) {
            return Mono.empty();
        }
        return Mono.defer(() -> {
            List<Set<ByteBuffer>> covered = new ArrayList<>(coveredByPass);
            covered.add(writtenSincePass);
            coveredByPass = List.copyOf(covered);
            writtenSincePass = ConcurrentHashMap.newKeySet();
            return sweeps.sweep(topology.current(), new Ownership(leave.remaining()), true, key -> writtenSincePass.add(ByteBuffer.wrap(key)));
        }).doOnNext(sweep -> {
            // Its keys are with their owners now, or back among writtenSincePass when it could not send them.
            coveredByPass = List.of();
            Leave now = leaving;
            if (now != null && now.remaining().equals(leave.remaining())) {
                leaving = new Leave(now.remaining(), now.startedMillis(), now.passes() + 1, sweep);
            }
        }).then();
    }

    /**
     * A leaving node's last pass, as it stops, once its servers take no more writes
     * ({@code HealConfiguration#lastHandover}): the records stored since its last complete pass began, and those a
     * pass could not send, go to their owners among the nodes that stay, at full speed, so every
     * write the node acknowledged is on them. Empty when the node is not leaving.
     */
    Mono<Sweep> lastPass() {
        return Mono.defer(() -> {
            Leave leave = leaving;
            if (leave == null) {
                return Mono.empty();
            }
            Set<ByteBuffer> keys = new HashSet<>(writtenSincePass);
            coveredByPass.forEach(keys::addAll);
            Topology current = topology.current();
            Ownership target = new Ownership(leave.remaining());
            Sweep sweep = new Sweep(wallMillis.getAsLong());
            Sweep atOnce = forwarded;
            log.info("leaving: {} writes stored while leaving were sent on to their owners as they came, {} could not be",
                    atOnce == null ? 0 : atOnce.sent(), atOnce == null ? 0 : atOnce.failed());
            return Flux.fromIterable(keys)
                    .map(key -> Arrays.copyOfRange(key.array(), key.arrayOffset(), key.arrayOffset() + key.remaining()))
                    .flatMap(key -> handOver(current, target, key, sweep), OwnershipSweep.SENDS_IN_FLIGHT)
                    .then(Mono.fromSupplier(() -> {
                        sweep.finish(wallMillis.getAsLong());
                        log.info("leaving: {} records stored since the last pass began sent to their owners among {} as the node stops, {} not sent",
                                sweep.sent(), leave.remaining(), sweep.failed());
                        return sweep;
                    }));
        });
    }

    /** Sends the key's record to its owners under {@code target}, unpaced; counted in {@code sweep}. */
    private Mono<Void> handOver(Topology current, Ownership target, byte[] key, Sweep sweep) {
        sweep.countScanned();
        return sender.send(current, key, record -> target.ownersOf(key, record.from()), sweep, null, () -> { }).then();
    }
}
