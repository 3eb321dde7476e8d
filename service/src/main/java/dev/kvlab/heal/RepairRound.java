package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.RepairChanges;
import dev.kvlab.peer.RepairClient;
import dev.kvlab.peer.RepairRequest;
import dev.kvlab.replication.Replica;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.RecordHeader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One repair round this node runs with a peer, over the records both own in the topology now:
 * <ol>
 *   <li>both sides hash the shared records into buckets ({@link RepairBuckets}), the peer as it
 *       answers, this node at the same time: hashes kept up to date as records change
 *       ({@link MaintainedBucketHashes}), so only the records changed since the last round are read;</li>
 *   <li>for the buckets whose hashes differ: when both keep their changes, each side's keys changed
 *       recently, with their headers at the snapshot of its hashes, explain most of them
 *       ({@link ChangedKeyComparison}), and only those keys are compared; for the rest, or with a peer
 *       of an older version, the peer streams the keys and headers of its shared records in them, and
 *       this node walks them beside its own, in key order;</li>
 *   <li>a record only one side holds, or holds in a newer version, is copied to the other: sent as a
 *       replica write, or fetched with a replica read and stored here; unless it is younger than
 *       the round covers ({@link TombstoneGrace#covered}), a write still on its way;</li>
 *   <li>when every record that differed was copied, the round is complete, and both sides learn it
 *       (tombstones wait for complete rounds).</li>
 * </ol>
 * Records move at most {@code bytesPerSecond} on average, a few at a time.
 */
final class RepairRound {

    private static final Logger log = LoggerFactory.getLogger(RepairRound.class);

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
    /** This node's hashes with what is asked beside them; the changes are known only when {@link #changesKept}. */
    private final Function<MaintainedBucketHashes.Ask, Mono<MaintainedBucketHashes.Answer>> localHashes;
    private final boolean changesKept;
    /** The updates on both sides the last complete round compared up to: this one asks for the keys changed after them. */
    private final PeerRepair.ChangesSeen since;
    private volatile PeerRepair.ChangesSeen seen = PeerRepair.ChangesSeen.NONE;
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
    private volatile int bucketsExplained;

    /**
     * Keys looked up on either side to compare by changed keys, at the most; past it the differing
     * buckets are scanned. A lookup is a point read, a scan reads every record on both sides.
     */
    static final int MAX_LOOKED_UP = 65_536;
    /** Keys one lookup request to the peer names at the most, and their bytes: a repair request is at most 1 MiB. */
    static final int LOOKED_UP_PER_REQUEST = 16_384;
    static final int LOOKED_UP_BYTES_PER_REQUEST = 512 << 10;

    RepairRound(Topology topology, String peer, Replica peerReplica, LocalStore store, RepairClient client, HeaderScan scan,
                Function<MaintainedBucketHashes.Ask, Mono<MaintainedBucketHashes.Answer>> localHashes, boolean changesKept,
                PeerRepair.ChangesSeen since, MemoryBudget budget, int buckets, long bytesPerSecond, TombstoneGrace grace, LongSupplier wallMillis) {
        this.topology = topology;
        this.peer = peer;
        this.peerReplica = peerReplica;
        this.store = store;
        this.client = client;
        this.scan = scan;
        this.localHashes = localHashes;
        this.changesKept = changesKept;
        this.since = since;
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
        Mono<Void> work = changesKept ? byChanges(request, started) : Mono.zip(localHashes.apply(MaintainedBucketHashes.Ask.HASHES), client.buckets(request))
                .flatMap(hashes -> {
                    read.addAndGet(hashes.getT1().recordsRead());
                    return byScan(request, differing(hashes.getT1().hashes(), hashes.getT2()), started);
                });
        return work
                .then(Mono.defer(() -> failed.get() == 0 ? client.done(peer, topology.self(), started) : Mono.empty()))
                .then(Mono.fromSupplier(() -> report(started, failed.get() == 0, failed.get() == 0 ? "complete"
                        : failed.get() + " records could not be copied")))
                .onErrorResume(error -> Mono.just(report(started, false, "failed: " + error.getMessage())));
    }

    private BitSet differing(long[] local, long[] remote) {
        BitSet differing = new BitSet(buckets);
        for (int i = 0; i < buckets; i++) {
            if (local[i] != remote[i]) {
                differing.set(i);
            }
        }
        bucketsDiffering = differing.cardinality();
        return differing;
    }

    private Mono<Void> byScan(RepairRequest request, BitSet differing, long started) {
        return differing.isEmpty() ? Mono.empty() : compare(request.withDiffering(differing), started);
    }

    /**
     * The round when this node keeps its changes: both sides' hashes with their recent changes, then
     * the keys either side cannot tell looked up at the snapshot of its hashes, then the buckets the
     * changed keys explain compared by those keys, and the rest scanned. A peer of an older version
     * (no changed keys exchange) is compared by the scan.
     */
    private Mono<Void> byChanges(RepairRequest request, long started) {
        return Mono.zip(localHashes.apply(MaintainedBucketHashes.Ask.recentSince(since.mine())),
                        client.changes(new RepairChanges.Request(request, true, since.theirs(), List.of())))
                .flatMap(both -> {
                    MaintainedBucketHashes.Answer mine = both.getT1();
                    read.addAndGet(mine.recordsRead());
                    if (both.getT2().isEmpty()) {
                        return client.buckets(request).flatMap(theirs -> byScan(request, differing(mine.hashes(), theirs), started));
                    }
                    RepairChanges theirs = both.getT2().get();
                    seen = new PeerRepair.ChangesSeen(mine.generation(), theirs.generation());
                    BitSet differing = differing(mine.hashes(), theirs.hashes());
                    return differing.isEmpty() ? Mono.<Void>empty() : byChangedKeys(request, mine, theirs, differing, started);
                });
    }

    private Mono<Void> byChangedKeys(RepairRequest request, MaintainedBucketHashes.Answer mine, RepairChanges theirs, BitSet differing,
                                     long started) {
        Map<ByteBuffer, RecordHeader> mineKnown = new HashMap<>();
        for (RecordHeader.Keyed key : mine.recent()) {
            mineKnown.put(ByteBuffer.wrap(key.key()), key.header());
        }
        Map<ByteBuffer, RecordHeader> theirsKnown = new HashMap<>();
        known(theirsKnown, theirs.recent());
        Set<ByteBuffer> candidates = new LinkedHashSet<>();
        for (Set<ByteBuffer> changed : List.of(mineKnown.keySet(), theirsKnown.keySet())) {
            for (ByteBuffer key : changed) {
                if (differing.get(RepairBuckets.bucketOf(key.array(), buckets))) {
                    candidates.add(key);
                }
            }
        }
        List<byte[]> mineToLookUp = candidates.stream().filter(key -> !mineKnown.containsKey(key)).map(ByteBuffer::array).toList();
        List<byte[]> theirsToLookUp = candidates.stream().filter(key -> !theirsKnown.containsKey(key)).map(ByteBuffer::array).toList();
        if (mineToLookUp.size() + theirsToLookUp.size() > MAX_LOOKED_UP) {
            log.info("repair with {}: {} keys changed on one side only ({} here, {} there) are more than a round looks up: the {} differing buckets are scanned",
                    peer, mineToLookUp.size() + theirsToLookUp.size(), theirsToLookUp.size(), mineToLookUp.size(), differing.cardinality());
            return byScan(request, differing, started);
        }
        Mono<List<MaintainedBucketHashes.Looked>> mineLooked = mineToLookUp.isEmpty() ? Mono.just(List.of())
                : localHashes.apply(MaintainedBucketHashes.Ask.lookUp(mineToLookUp, mine.generation())).map(answer -> {
                    read.addAndGet(answer.recordsRead() + mineToLookUp.size());
                    return answer.looked();
                });
        Mono<List<RepairChanges.KeyState>> theirsLooked = Flux.fromIterable(requests(theirsToLookUp))
                .concatMap(keys -> client.changes(new RepairChanges.Request(request, false, theirs.generation(), keys)))
                .concatMapIterable(answer -> answer.map(RepairChanges::looked).orElse(List.of()))
                .collectList();
        return Mono.zip(mineLooked, theirsLooked).flatMap(looked -> {
            for (MaintainedBucketHashes.Looked key : looked.getT1()) {
                if (key.known()) {
                    mineKnown.put(ByteBuffer.wrap(key.key()), key.header());
                }
            }
            known(theirsKnown, looked.getT2());
            ChangedKeyComparison.Outcome outcome = new ChangedKeyComparison(topology.ownership(), topology.self(), peer)
                    .compare(mine.hashes(), mineKnown, theirs.hashes(), theirsKnown, differing, candidates);
            bucketsExplained = outcome.explained().cardinality();
            BitSet rest = (BitSet) differing.clone();
            rest.andNot(outcome.explained());
            return Flux.fromIterable(outcome.differences())
                    .flatMap(difference -> reconcile(difference.key(), difference.mine(), difference.theirs(), started), COPIES_IN_FLIGHT)
                    .then(rest.isEmpty() ? Mono.empty() : compare(request.withDiffering(rest), started));
        });
    }

    /** {@code keys} cut into lookup requests of at most {@value #LOOKED_UP_PER_REQUEST} keys and {@value #LOOKED_UP_BYTES_PER_REQUEST} bytes. */
    static List<List<byte[]>> requests(List<byte[]> keys) {
        List<List<byte[]>> requests = new ArrayList<>();
        List<byte[]> request = new ArrayList<>();
        long bytes = 0;
        for (byte[] key : keys) {
            if (request.size() == LOOKED_UP_PER_REQUEST || bytes + key.length + 2 > LOOKED_UP_BYTES_PER_REQUEST) {
                requests.add(request);
                request = new ArrayList<>();
                bytes = 0;
            }
            request.add(key);
            bytes += key.length + 2;
        }
        if (!request.isEmpty()) {
            requests.add(request);
        }
        return requests;
    }

    /** The updates this round compared up to, on both sides; {@link PeerRepair.ChangesSeen#NONE} when it exchanged no changes. */
    PeerRepair.ChangesSeen seen() {
        return seen;
    }

    private static void known(Map<ByteBuffer, RecordHeader> known, List<RepairChanges.KeyState> keys) {
        for (RepairChanges.KeyState key : keys) {
            if (key.known()) {
                known.put(ByteBuffer.wrap(key.key()), key.header());
            }
        }
    }

    private PeerRepair.Round report(long started, boolean complete, String outcome) {
        return new PeerRepair.Round(started, wallMillis.getAsLong(), complete, outcome, bucketsDiffering, bucketsExplained, compared.get(),
                sent.get(), received.get(), read.get());
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
        RecordHeader mine = null;
        RecordHeader theirs = null;
        for (Side side : sides) {
            if (side.local()) {
                mine = side.record().header();
            } else {
                theirs = side.record().header();
            }
        }
        return reconcile(sides.getFirst().record().key(), mine, theirs, started);
    }

    /** Copies the record of {@code key} to the side that lacks it or holds an older version. */
    private Mono<Void> reconcile(byte[] key, RecordHeader mine, RecordHeader theirs, long started) {
        compared.incrementAndGet();
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
