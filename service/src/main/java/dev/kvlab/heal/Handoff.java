package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.Leaving;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Keeps every record on its owners as the topology changes. A sweep reads the node's records
 * (keys and headers, paced) and
 * <ul>
 *   <li>sends each record this node does not own to every owner, and deletes it here once all have
 *       stored it, unless it changed meanwhile: the old copy stays until the new owners hold it;</li>
 *   <li>purges each tombstone whose time has come ({@link TombstoneGrace}).</li>
 * </ul>
 * A sweep runs {@code settle} after the topology changed (so that a change seen in passes is
 * taken whole), every {@code interval}, and again soon after one that could not reach an owner.
 *
 * <p>A node that leaves on purpose ({@link #leave}) sends every record to its owners in the
 * topology without it, keeping its own copies (it serves until it stops), and again and again
 * until it stops, so writes it takes meanwhile reach them too. It takes no copy back of a record
 * it holds already ({@link Leaving}): the other nodes' sweeps, which still count it an owner, keep
 * the copies it handed them. The writes it takes after its last pass began go to their owners
 * when it stops, once it takes no more ({@link #lastPass}).
 */
public final class Handoff implements BackgroundWork, Leaving {

    private static final Logger log = LoggerFactory.getLogger(Handoff.class);
    /** Records sent at once. */
    private static final int SENDS_IN_FLIGHT = 16;
    /** Writes a leaving node sends on at once; past it they wait for the next pass. */
    private static final int FORWARDS_IN_FLIGHT = 64;
    /** Records deleted or purged in one storage call. */
    private static final int DELETE_BATCH = 256;

    private final TopologyHistory topology;
    private final LocalStore store;
    private final ReplicaDirectory replicas;
    private final MemoryBudget budget;
    private final HeaderScan scan;
    private final TombstoneGrace grace;
    private final RepairService repair;
    private final HealingProperties.Handoff settings;
    private final long bytesPerSecond;
    private final LongSupplier wallMillis;
    private final AtomicLong moved = new AtomicLong();
    private final AtomicLong purged = new AtomicLong();
    private final DeletionHold hold;
    private volatile Sweep last;
    private volatile Sweep running;
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
    private volatile long sweptTopologyMillis = -1;
    private volatile long nextSweepMillis;
    private Disposable ticks;

    /**
     * A sweep's progress and result: the records it read, sent, moved away (deleted here once their
     * owners held them), purged, and could not send.
     */
    public static final class Sweep {
        private final long startedMillis;
        private final AtomicLong scanned = new AtomicLong();
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong movedAway = new AtomicLong();
        private final AtomicLong purged = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private volatile long finishedMillis;

        Sweep(long startedMillis) {
            this.startedMillis = startedMillis;
        }

        public long startedMillis() {
            return startedMillis;
        }

        /** 0 while it runs. */
        public long finishedMillis() {
            return finishedMillis;
        }

        public long scanned() {
            return scanned.get();
        }

        public long sent() {
            return sent.get();
        }

        public long movedAway() {
            return movedAway.get();
        }

        public long purged() {
            return purged.get();
        }

        public long failed() {
            return failed.get();
        }
    }

    /** A leave: the nodes that stay, the sweeps it ran, and the last one finished. */
    public record Leave(List<String> remaining, long startedMillis, int passes, Sweep lastPass) {
    }

    public Handoff(TopologyHistory topology, LocalStore store, ReplicaDirectory replicas, MemoryBudget budget, TombstoneGrace grace,
                   RepairService repair, HealingProperties healing, LongSupplier wallMillis) {
        this.topology = topology;
        this.store = store;
        this.replicas = replicas;
        this.budget = budget;
        this.scan = new HeaderScan(store, healing.handoff().scanRate());
        this.grace = grace;
        this.repair = repair;
        this.settings = healing.handoff();
        this.bytesPerSecond = healing.repair().rate().toBytes();
        this.wallMillis = wallMillis;
        this.hold = new DeletionHold(wallMillis);
    }

    @Override
    public void start() {
        ticks = Ticks.every(Duration.ofSeconds(1), this::sweepIfDue, log, "handoff");
    }

    /** The next sweep, if one is due. */
    Mono<Void> sweepIfDue() {
        return Mono.defer(() -> {
            long now = wallMillis.getAsLong();
            Leave leave = leaving;
            if (leave != null) {
                return pass(leave);
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

    /**
     * Starts to hand this node's records to their owners in {@code remaining}, the nodes that stay;
     * the sweeps go on until the node stops.
     */
    public Leave leave(List<String> remaining) {
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

    /** One more sweep of a leave; counted unless the leave changed meanwhile. */
    private Mono<Void> pass(Leave leave) {
        return Mono.defer(() -> {
            List<Set<ByteBuffer>> covered = new ArrayList<>(coveredByPass);
            covered.add(writtenSincePass);
            coveredByPass = List.copyOf(covered);
            writtenSincePass = ConcurrentHashMap.newKeySet();
            return sweep(topology.current(), new Ownership(leave.remaining()), true);
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
     * ({@link LastHandover}): the records stored since its last complete pass began, and those a
     * pass could not send, go to their owners among the nodes that stay, at full speed, so every
     * write the node acknowledged is on them. Empty when the node is not leaving.
     */
    public Mono<Sweep> lastPass() {
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
                    .flatMap(key -> handOver(current, target, key, sweep), SENDS_IN_FLIGHT)
                    .then(Mono.fromSupplier(() -> {
                        sweep.finishedMillis = wallMillis.getAsLong();
                        log.info("leaving: {} records stored since the last pass began sent to their owners among {} as the node stops, {} not sent",
                                sweep.sent(), leave.remaining(), sweep.failed());
                        return sweep;
                    }));
        });
    }

    /** Sends the key's record to its owners under {@code target}; counted in {@code sweep}. */
    private Mono<Void> handOver(Topology current, Ownership target, byte[] key, Sweep sweep) {
        sweep.scanned.incrementAndGet();
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                        lease -> store.get(key, lease).flatMap(record -> Flux.fromIterable(target.ownersOf(key, record.from()))
                                .flatMap(owner -> replicas.replicaOf(owner, current).write(key, record))
                                .then(Mono.fromRunnable(sweep.sent::incrementAndGet))),
                        lease -> Mono.fromRunnable(lease::release))
                .onErrorResume(error -> {
                    sweep.failed.incrementAndGet();
                    log.debug("leaving: could not hand a record of {} bytes of key to its owners: {}", key.length, error.toString());
                    return Mono.empty();
                })
                .then();
    }

    /**
     * Sends each record this node does not own under {@code target} to its owners there; deletes
     * it here afterwards unless {@code keepCopies}, and purges tombstones whose time has come,
     * unless the topology changed within {@code window}.
     */
    Mono<Sweep> sweep(Topology current, Ownership target, boolean keepCopies) {
        return Mono.defer(() -> {
            Sweep sweep = new Sweep(wallMillis.getAsLong());
            running = sweep;
            // Not while the topology may still be settling (a node that started before DNS
            // answered sees itself alone, and would count itself the only owner of every key).
            boolean purging = !keepCopies && sweep.startedMillis() - topology.changedMillis() > settings.window().toMillis();
            Pacer pacer = new Pacer(bytesPerSecond);
            String self = current.self();
            return scan.all()
                    .doOnNext(record -> sweep.scanned.incrementAndGet())
                    .flatMap(record -> {
                        List<String> owners = target.ownersOf(record.key(), record.header().from());
                        if (!owners.contains(self)) {
                            return send(current, record, owners, sweep, pacer, keepCopies).map(Action::move);
                        }
                        if (purging && grace.purgeable(record.header(), owners, self, repair::lastCompleteRoundStarted)) {
                            return Mono.just(Action.purge(new Entry(record.key(), Record.of(record.header()))));
                        }
                        return Mono.<Action>empty();
                    }, SENDS_IN_FLIGHT)
                    .buffer(DELETE_BATCH)
                    .concatMap(actions -> delete(actions, keepCopies, sweep))
                    .then(Mono.fromSupplier(() -> {
                        sweep.finishedMillis = wallMillis.getAsLong();
                        last = sweep;
                        running = null;
                        if (sweep.sent() + sweep.purged() + sweep.failed() > 0) {
                            log.info("handoff: {} records read, {} sent to their owners, {} moved away, {} tombstones purged, {} not sent",
                                    sweep.scanned(), sweep.sent(), sweep.movedAway(), sweep.purged(), sweep.failed());
                        }
                        return sweep;
                    }))
                    .doOnError(error -> running = null);
        });
    }

    /** What a sweep does with one record once it has looked at it. */
    private record Action(Entry entry, boolean purge) {
        static Action move(Entry sent) {
            return new Action(sent, false);
        }

        static Action purge(Entry tombstone) {
            return new Action(tombstone, true);
        }
    }

    /**
     * Sends the record to every owner; the record sent, once all stored it; empty when one did not
     * (a leaving node then sends it again when it stops, unless a later pass does).
     */
    private Mono<Entry> send(Topology current, RecordHeader.Keyed keyed, List<String> owners, Sweep sweep, Pacer pacer, boolean leaving) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                lease -> store.get(keyed.key(), lease).flatMap(record -> Flux.fromIterable(owners)
                        .flatMap(owner -> replicas.replicaOf(owner, current).write(keyed.key(), record))
                        .then(Mono.fromSupplier(() -> {
                            sweep.sent.incrementAndGet();
                            return new Entry(keyed.key(), record);
                        }))
                        .delayUntil(sent -> pacer.after((long) record.encoded().length * owners.size()))),
                lease -> Mono.fromRunnable(lease::release))
                .onErrorResume(error -> {
                    sweep.failed.incrementAndGet();
                    if (leaving) {
                        writtenSincePass.add(ByteBuffer.wrap(keyed.key()));
                    }
                    log.debug("could not hand {} bytes of key to {}: {}", keyed.key().length, owners, error.toString());
                    return Mono.empty();
                });
    }

    /** Deletes the records sent (unless kept) and purges the tombstones, each only if it is still the one looked at. */
    private Mono<Void> delete(List<Action> actions, boolean keepCopies, Sweep sweep) {
        List<Entry> moves = new ArrayList<>();
        List<Entry> purges = new ArrayList<>();
        for (Action action : actions) {
            if (action.purge()) {
                purges.add(action.entry());
            } else if (!keepCopies) {
                moves.add(action.entry());
            }
        }
        if (moves.isEmpty() && purges.isEmpty()) {
            return Mono.empty();
        }
        // The hold is looked at in the storage task itself: a deletion that starts after a backup's
        // hold was answered leaves the record for that backup's snapshot of this node.
        return store.onStorage(rocks -> new long[] {hold.active() ? 0 : rocks.deleteIfUnchanged(moves), rocks.deleteIfUnchanged(purges)})
                .doOnNext(deleted -> {
                    sweep.movedAway.addAndGet(deleted[0]);
                    sweep.purged.addAndGet(deleted[1]);
                    moved.addAndGet(deleted[0]);
                    purged.addAndGet(deleted[1]);
                })
                .then();
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
        return running;
    }

    /** The last sweep finished, or null. */
    public Sweep last() {
        return last;
    }

    /** The leave under way, or null. */
    public Leave leaving() {
        return leaving;
    }

    @Override
    public boolean isLeaving() {
        return leaving != null;
    }

    /** Records deleted here once their owners held them, since the node started. */
    public long moved() {
        return moved.get();
    }

    /** Tombstones purged since the node started. */
    public long purged() {
        return purged.get();
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
    }
}
