package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One pass over this node's records (keys and headers, paced): each record this node does not own
 * goes to its owners and is deleted here once all have stored it, unless it changed meanwhile or a
 * backup holds deletions ({@link DeletionHold}); each tombstone whose time has come
 * ({@link TombstoneGrace}) is purged.
 */
final class OwnershipSweep {

    /** Logs as the handoff, as it always has: operators filter and alert on that logger. */
    private static final Logger log = LoggerFactory.getLogger(Handoff.class);
    /** Records sent at once. */
    static final int SENDS_IN_FLIGHT = 16;
    /** Records deleted or purged in one storage call. */
    private static final int DELETE_BATCH = 256;

    private final TopologyHistory topology;
    private final LocalStore store;
    private final RecordSender sender;
    private final HeaderScan scan;
    private final TombstoneGrace grace;
    private final RepairService repair;
    private final HealingProperties.Handoff settings;
    private final long bytesPerSecond;
    private final LongSupplier wallMillis;
    private final DeletionHold hold;
    private final AtomicLong moved = new AtomicLong();
    private final AtomicLong purged = new AtomicLong();
    private volatile Sweep last;
    private volatile Sweep running;

    OwnershipSweep(TopologyHistory topology, LocalStore store, RecordSender sender, TombstoneGrace grace, RepairService repair,
                   HealingProperties healing, DeletionHold hold, LongSupplier wallMillis) {
        this.topology = topology;
        this.store = store;
        this.sender = sender;
        this.scan = new HeaderScan(store, healing.handoff().scanRate());
        this.grace = grace;
        this.repair = repair;
        this.settings = healing.handoff();
        this.bytesPerSecond = healing.repair().rate().toBytes();
        this.hold = hold;
        this.wallMillis = wallMillis;
    }

    /**
     * Sends each record this node does not own under {@code target} to its owners there; deletes
     * it here afterwards unless {@code keepCopies}, and purges tombstones whose time has come,
     * unless the topology changed within {@code window}. {@code unsent} is told each key it could
     * not send.
     */
    Mono<Sweep> sweep(Topology current, Ownership target, boolean keepCopies, Consumer<byte[]> unsent) {
        return Mono.defer(() -> {
            Sweep sweep = new Sweep(wallMillis.getAsLong());
            running = sweep;
            // Not while the topology may still be settling (a node that started before DNS
            // answered sees itself alone, and would count itself the only owner of every key).
            boolean purging = !keepCopies && sweep.startedMillis() - topology.changedMillis() > settings.window().toMillis();
            Pacer pacer = new Pacer(bytesPerSecond);
            String self = current.self();
            return scan.all()
                    .doOnNext(record -> sweep.countScanned())
                    .flatMap(record -> {
                        List<String> owners = target.ownersOf(record.key(), record.header().from());
                        if (!owners.contains(self)) {
                            byte[] key = record.key();
                            return sender.send(current, key, sent -> owners, sweep, pacer, () -> unsent.accept(key)).map(Action::move);
                        }
                        if (purging && grace.purgeable(record.header(), owners, self, repair::lastCompleteRoundStarted)) {
                            return Mono.just(Action.purge(new Entry(record.key(), Record.of(record.header()))));
                        }
                        return Mono.<Action>empty();
                    }, SENDS_IN_FLIGHT)
                    .buffer(DELETE_BATCH)
                    .concatMap(actions -> delete(actions, keepCopies, sweep))
                    .then(Mono.fromSupplier(() -> {
                        sweep.finish(wallMillis.getAsLong());
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
                    sweep.countDeleted(deleted[0], deleted[1]);
                    moved.addAndGet(deleted[0]);
                    purged.addAndGet(deleted[1]);
                })
                .then();
    }

    /** The sweep running now, or null. */
    Sweep running() {
        return running;
    }

    /** The last sweep finished, or null. */
    Sweep last() {
        return last;
    }

    /** Records deleted here once their owners held them, since the node started. */
    long moved() {
        return moved.get();
    }

    /** Tombstones purged since the node started. */
    long purged() {
        return purged.get();
    }
}
