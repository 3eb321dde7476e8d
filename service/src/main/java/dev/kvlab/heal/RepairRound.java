package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.RepairClient;
import dev.kvlab.peer.RepairRequest;
import dev.kvlab.replication.Replica;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One repair round this node runs with a peer, over the records both own in the topology now:
 * <ol>
 *   <li>both sides hash the shared records into buckets ({@link RepairBuckets}), the peer as it
 *       answers, this node at the same time: hashes kept up to date as records change
 *       ({@link MaintainedBucketHashes}), so only the records changed since the last round are read;</li>
 *   <li>for the buckets whose hashes differ, the peer streams the keys and headers of its shared
 *       records, and this node walks them beside its own, in key order;</li>
 *   <li>a record only one side holds, or holds in a newer version, is copied to the other: sent as a
 *       replica write, or fetched with a replica read and stored here; unless it is younger than
 *       the round covers ({@link TombstoneGrace#covered}), a write still on its way;</li>
 *   <li>when every record that differed was copied, the round is complete, and both sides learn it
 *       (tombstones wait for complete rounds).</li>
 * </ol>
 * Records move at most {@code bytesPerSecond} on average, a few at a time.
 */
final class RepairRound {

    private static final Comparator<Side> KEY_ORDER = (a, b) -> Arrays.compareUnsigned(a.record().key(), b.record().key());
    /** Digests read ahead of the walk, from each side. */
    private static final int PREFETCH = 256;
    /** Records copied at once. */
    private static final int COPIES_IN_FLIGHT = 16;

    private final Topology topology;
    private final String peer;
    private final Replica peerReplica;
    private final LocalStore store;
    private final RepairClient client;
    private final HeaderScan scan;
    private final Mono<MaintainedBucketHashes.Answer> localHashes;
    private final MemoryBudget budget;
    private final int buckets;
    private final Pacer pacer;
    private final TombstoneGrace grace;
    private final LongSupplier wallMillis;
    private final AtomicLong compared = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    /** Records this node read for the round: to bring its hashes up to date, and of the differing buckets. */
    private final AtomicLong read = new AtomicLong();
    private int bucketsDiffering;

    RepairRound(Topology topology, String peer, Replica peerReplica, LocalStore store, RepairClient client, HeaderScan scan,
                Mono<MaintainedBucketHashes.Answer> localHashes, MemoryBudget budget, int buckets, long bytesPerSecond, TombstoneGrace grace, LongSupplier wallMillis) {
        this.topology = topology;
        this.peer = peer;
        this.peerReplica = peerReplica;
        this.store = store;
        this.client = client;
        this.scan = scan;
        this.localHashes = localHashes;
        this.budget = budget;
        this.buckets = buckets;
        this.pacer = new Pacer(bytesPerSecond);
        this.grace = grace;
        this.wallMillis = wallMillis;
    }

    /** The round, to its end; a failure of the peer or of the store ends it as incomplete. */
    Mono<PeerRepair.Round> run() {
        long started = wallMillis.getAsLong();
        RepairRequest request = new RepairRequest(topology.nodes(), topology.self(), peer, buckets, null);
        return Mono.zip(localHashes, client.buckets(request))
                .flatMap(hashes -> {
                    read.addAndGet(hashes.getT1().recordsRead());
                    long[] local = hashes.getT1().hashes();
                    BitSet differing = new BitSet(buckets);
                    for (int i = 0; i < buckets; i++) {
                        if (local[i] != hashes.getT2()[i]) {
                            differing.set(i);
                        }
                    }
                    bucketsDiffering = differing.cardinality();
                    return differing.isEmpty() ? Mono.<Void>empty() : compare(request.withDiffering(differing), started);
                })
                .then(Mono.defer(() -> failed.get() == 0 ? client.done(peer, topology.self(), started) : Mono.empty()))
                .then(Mono.fromSupplier(() -> report(started, failed.get() == 0, failed.get() == 0 ? "complete"
                        : failed.get() + " records could not be copied")))
                .onErrorResume(error -> Mono.just(report(started, false, "failed: " + error.getMessage())));
    }

    private PeerRepair.Round report(long started, boolean complete, String outcome) {
        return new PeerRepair.Round(started, wallMillis.getAsLong(), complete, outcome, bucketsDiffering, compared.get(), sent.get(),
                received.get(), read.get());
    }

    /** The bucket hashes of the records {@code self} holds that both it and {@code peer} own. */
    static Mono<long[]> bucketHashes(Ownership ownership, String self, String peer, Flux<RecordHeader.Keyed> records, int buckets) {
        return shared(ownership, self, peer, records)
                .reduce(new RepairBuckets(buckets), (hashes, record) -> {
                    hashes.add(record);
                    return hashes;
                })
                .map(RepairBuckets::hashes);
    }

    /** Of {@code records}, those {@code self} holds that both it and {@code peer} own, in key order. */
    static Flux<RecordHeader.Keyed> shared(Ownership ownership, String self, String peer, Flux<RecordHeader.Keyed> records) {
        return records.filter(record -> {
            List<String> owners = ownership.ownersOf(record.key(), record.header().from());
            return owners.contains(self) && owners.contains(peer);
        });
    }

    /** Walks both sides' digests of the differing buckets in key order and copies what differs. */
    private Mono<Void> compare(RepairRequest request, long started) {
        BitSet differing = request.differing();
        Flux<Side> local = shared(topology.ownership(), topology.self(), peer, scan.all().doOnNext(record -> read.incrementAndGet()))
                .filter(record -> differing.get(RepairBuckets.bucketOf(record.key(), buckets)))
                .map(record -> new Side(record, true));
        Flux<Side> remote = client.digests(request).map(record -> new Side(record, false));
        return byKey(Flux.mergeComparing(PREFETCH, KEY_ORDER, local, remote))
                .flatMap(sides -> reconcile(sides, started), COPIES_IN_FLIGHT)
                .then();
    }

    /** One key's headers on this side, the other, or both. */
    record Side(RecordHeader.Keyed record, boolean local) {
    }

    /**
     * The sides in key order, those of one key together. Not {@code bufferUntilChanged}: its count
     * of requested buffers races when the buffers are requested on another thread than the one the
     * sides arrive on (the copies end on timers and event loops, the sides come from a storage
     * thread and an event loop), and it then fails the round with "Could not emit buffer due to
     * lack of requests" (https://github.com/reactor/reactor-core/issues/1937 and /2942), as it did
     * refilling 1M keys.
     */
    static Flux<List<Side>> byKey(Flux<Side> sides) {
        return Flux.defer(() -> {
            KeyGroup group = new KeyGroup();
            return sides.<List<Side>>handle((side, sink) -> {
                List<Side> done = group.add(side);
                if (done != null) {
                    sink.next(done);
                }
            }).concatWith(Mono.fromSupplier(group::rest));
        });
    }

    /** The sides of the key seen last: a key's group is done when another key comes, or at the end. */
    private static final class KeyGroup {

        private List<Side> sides;

        /** Adds {@code side}; the group of the key before it, if this begins another key. */
        List<Side> add(Side side) {
            if (sides != null && Arrays.equals(sides.getFirst().record().key(), side.record().key())) {
                sides.add(side);
                return null;
            }
            List<Side> done = sides;
            sides = new ArrayList<>(2);
            sides.add(side);
            return done;
        }

        /** The last group, null when there was none. */
        List<Side> rest() {
            List<Side> last = sides;
            sides = null;
            return last;
        }
    }

    private Mono<Void> reconcile(List<Side> sides, long started) {
        compared.incrementAndGet();
        byte[] key = sides.getFirst().record().key();
        RecordHeader mine = null;
        RecordHeader theirs = null;
        for (Side side : sides) {
            if (side.local()) {
                mine = side.record().header();
            } else {
                theirs = side.record().header();
            }
        }
        if (mine != null && (theirs == null ? !grace.forgettable(mine) : mine.version().isNewerThan(theirs.version()))) {
            return grace.covered(mine, started) ? paced(send(key)) : Mono.empty();
        }
        if (theirs != null && (mine == null ? !grace.forgettable(theirs) : theirs.version().isNewerThan(mine.version()))) {
            return grace.covered(theirs, started) ? paced(fetch(key)) : Mono.empty();
        }
        return Mono.empty();
    }

    /** A copy counted as failed rather than ending the round when it fails, then paced by its bytes. */
    private Mono<Void> paced(Mono<Long> copy) {
        return copy.onErrorResume(error -> {
            failed.incrementAndGet();
            return Mono.just(0L);
        }).flatMap(pacer::after).then();
    }

    /** Sends this node's record of the key to the peer; the bytes sent. */
    private Mono<Long> send(byte[] key) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                lease -> store.get(key, lease).flatMap(record -> peerReplica.write(key, record)
                        .then(Mono.fromSupplier(() -> {
                            sent.incrementAndGet();
                            return (long) record.encoded().length;
                        }))),
                lease -> Mono.fromRunnable(lease::release));
    }

    /** Fetches the peer's record of the key and stores it here; the bytes received. */
    private Mono<Long> fetch(byte[] key) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                lease -> peerReplica.read(key, lease).flatMap(found -> {
                    if (found.isEmpty()) {
                        return Mono.just(0L);
                    }
                    Record record = found.get();
                    return store.write(key, record).then(Mono.fromSupplier(() -> {
                        received.incrementAndGet();
                        return (long) record.encoded().length;
                    }));
                }),
                lease -> Mono.fromRunnable(lease::release));
    }
}
