package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.peer.RepairChanges;
import dev.kvlab.peer.RepairClient;
import dev.kvlab.peer.RepairRequest;
import dev.kvlab.peer.RepairResponder;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.RecordHeader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Anti-entropy: runs repair rounds ({@link RepairRound}) with each peer in the background, one
 * round at a time, and answers the rounds peers run with this node ({@link RepairResponder}). A
 * round with a peer is due {@code interval} after the last one between the two ended (whichever
 * side ran it), at once when the node starts, after the topology changes, and on demand; a round
 * that failed is tried again after {@link #RETRY_AFTER_FAILURE} at the earliest.
 */
public final class RepairService implements RepairResponder, BackgroundWork {

    private static final Logger log = LoggerFactory.getLogger(RepairService.class);
    static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(5);

    private final TopologyHistory topology;
    private final LocalStore store;
    private final ReplicaDirectory replicas;
    private final RepairClient client;
    private final MemoryBudget budget;
    private final HealingProperties.Repair settings;
    private final HeaderScan scan;
    /** Null when keeping them is switched off: every round then hashes every record. */
    private final MaintainedBucketHashes hashes;
    private final TombstoneGrace grace;
    private final LongSupplier wallMillis;
    private final Map<String, PeerRepair> peers = new ConcurrentHashMap<>();
    private final AtomicLong roundsComplete = new AtomicLong();
    private final AtomicLong roundsFailed = new AtomicLong();
    private final AtomicLong keysCompared = new AtomicLong();
    private final AtomicLong recordsSent = new AtomicLong();
    private final AtomicLong recordsReceived = new AtomicLong();
    private volatile long topologySeenMillis;
    private Disposable ticks;

    public RepairService(TopologyHistory topology, LocalStore store, ReplicaDirectory replicas, RepairClient client, MemoryBudget budget,
                         HealingProperties.Repair settings, TombstoneGrace grace, LongSupplier wallMillis) {
        this.topology = topology;
        this.store = store;
        this.replicas = replicas;
        this.client = client;
        this.budget = budget;
        this.settings = settings;
        this.scan = new HeaderScan(store, settings.scanRate(), new LongAdder());
        long trackedKeys = settings.changedKeysMemory().toBytes();
        this.hashes = trackedKeys > 0 ? new MaintainedBucketHashes(store, scan, trackedKeys) : null;
        this.grace = grace;
        this.wallMillis = wallMillis;
        this.topologySeenMillis = topology.changedMillis();
    }

    /** Looks every second for rounds that are due; with repair switched off, for rounds asked for. */
    @Override
    public void start() {
        if (settings.enabled()) {
            if (hashes != null) {
                Topology current = topology.current();
                hashes.prepare(new MaintainedBucketHashes.Basis(current.nodes(), current.self(), settings.buckets()));
            }
            requestAll();
        }
        ticks = Ticks.every(Duration.ofSeconds(1), this::runDue, log, "repair");
    }

    /** The rounds due now, one after the other. */
    Mono<Void> runDue() {
        return Mono.defer(() -> {
            Topology current = topology.current();
            if (topology.changedMillis() != topologySeenMillis) {
                topologySeenMillis = topology.changedMillis();
                if (settings.enabled()) {
                    requestAll();
                }
            }
            long now = wallMillis.getAsLong();
            return Flux.fromIterable(current.nodes())
                    .filter(node -> !node.equals(current.self()) && peer(node).due(now, settings.interval().toMillis(), settings.enabled()))
                    .concatMap(node -> round(current, node))
                    .then();
        });
    }

    /** Runs one round with {@code node} now, whether due or not. */
    Mono<PeerRepair.Round> round(Topology current, String node) {
        PeerRepair state = peer(node);
        return Mono.defer(() -> {
            state.started();
            RepairRound round = new RepairRound(current, node, replicas.replicaOf(node, current), store, client, scan,
                    ask -> bucketHashes(current.nodes(), current.self(), node, settings.buckets(), ask), hashes != null, state.changesSeen(),
                    budget, settings.buckets(), settings.rate().toBytes(), grace, wallMillis);
            return round.run().doOnNext(ended -> {
                if (ended.complete()) {
                    state.changesSeen(round.seen());
                }
            });
        }).doOnNext(round -> {
            PeerRepair.Round before = state.last();
            state.ended(round, RETRY_AFTER_FAILURE.toMillis());
            counted(node, round, before);
        });
    }

    /** Counts the round, and logs what it did; a failure like the round's before only at debug level. */
    private void counted(String node, PeerRepair.Round round, PeerRepair.Round before) {
        (round.complete() ? roundsComplete : roundsFailed).incrementAndGet();
        keysCompared.addAndGet(round.keysCompared());
        recordsSent.addAndGet(round.recordsSent());
        recordsReceived.addAndGet(round.recordsReceived());
        if (!round.complete()) {
            if (before != null && before.outcome().equals(round.outcome())) {
                log.debug("repair with {} did not complete: {}", node, round.outcome());
            } else {
                log.info("repair with {} did not complete: {}", node, round.outcome());
            }
        } else if (round.keysCompared() > 0) {
            log.info("repair with {}: {} buckets of {} differed ({} compared by changed keys alone), {} keys compared, {} records sent, {} received, {} read, in {} ms",
                    node, round.bucketsDiffering(), settings.buckets(), round.bucketsByChangedKeys(), round.keysCompared(), round.recordsSent(), round.recordsReceived(),
                    round.recordsRead(), round.finishedMillis() - round.startedMillis());
        }
    }

    /** Asks for a round with every peer as soon as possible. */
    public void requestAll() {
        Topology current = topology.current();
        current.nodes().stream().filter(node -> !node.equals(current.self())).forEach(node -> peer(node).request());
    }

    @Override
    public Mono<long[]> buckets(RepairRequest request) {
        return Mono.defer(() -> {
            ownership(request);
            return bucketHashes(request.nodes(), request.responder(), request.initiator(), request.buckets(), MaintainedBucketHashes.Ask.HASHES);
        }).map(MaintainedBucketHashes.Answer::hashes);
    }

    @Override
    public Mono<RepairChanges> changes(RepairChanges.Request asked) {
        RepairRequest request = asked.request();
        return Mono.defer(() -> {
            ownership(request);
            return bucketHashes(request.nodes(), request.responder(), request.initiator(), request.buckets(),
                    asked.recent() ? MaintainedBucketHashes.Ask.recentSince(asked.generation())
                            : MaintainedBucketHashes.Ask.lookUp(asked.keys(), asked.generation()));
        }).map(answer -> new RepairChanges(answer.hashes(), answer.generation(),
                answer.recent().stream().map(key -> new RepairChanges.KeyState(key.key(), true, key.header())).toList(),
                answer.looked().stream().map(key -> new RepairChanges.KeyState(key.key(), key.known(), key.header())).toList()));
    }

    /**
     * The bucket hashes of the records {@code self} shares with {@code peer} under the topology of
     * {@code nodes}: the maintained ones with what {@code ask} asks beside them, unless keeping them is
     * off or a peer asks for another number of buckets, when every record is read and no change is known.
     */
    private Mono<MaintainedBucketHashes.Answer> bucketHashes(List<String> nodes, String self, String peer, int buckets,
                                                             MaintainedBucketHashes.Ask ask) {
        if (hashes != null && buckets == settings.buckets()) {
            return hashes.hashes(new MaintainedBucketHashes.Basis(nodes, self, buckets), peer, ask);
        }
        // Not kept: every record is read, and no change is known (the answer has none, so the round scans).
        return Mono.defer(() -> {
            AtomicLong read = new AtomicLong();
            return RepairRound.bucketHashes(new Ownership(nodes), self, peer, scan.all().doOnNext(record -> read.incrementAndGet()), buckets)
                    .map(found -> new MaintainedBucketHashes.Answer(found, read.get()));
        });
    }

    @Override
    public Flux<RecordHeader.Keyed> digests(RepairRequest request) {
        return Flux.defer(() -> RepairRound.shared(ownership(request), request.responder(), request.initiator(), scan.all())
                .filter(record -> request.differing().get(RepairBuckets.bucketOf(record.key(), request.buckets()))));
    }

    /** The ownership the request reckons by, if this node reckons by the same. */
    private Ownership ownership(RepairRequest request) {
        Topology current = topology.current();
        if (!current.nodes().equals(request.nodes()) || !current.self().equals(request.responder())) {
            throw new TopologyMismatchException("this node (" + current.self() + ") reckons by " + current.nodes()
                    + ", the repair round by " + request.nodes());
        }
        return current.ownership();
    }

    @Override
    public void roundDone(String initiator, long startedMillis) {
        if (topology.current().nodes().contains(initiator)) {
            peer(initiator).completed(startedMillis, wallMillis.getAsLong());
        }
    }

    /** The start of the last repair round with {@code node} that completed; 0 when none did. */
    long lastCompleteRoundStarted(String node) {
        PeerRepair state = peers.get(node);
        return state == null ? PeerRepair.NEVER : state.lastCompleteStartedMillis();
    }

    private PeerRepair peer(String node) {
        return peers.computeIfAbsent(node, unused -> new PeerRepair());
    }

    /** What the node knows of its rounds with each peer of the topology, by peer. */
    public Map<String, Status> status() {
        Topology current = topology.current();
        Map<String, Status> status = new TreeMap<>();
        for (String node : current.nodes()) {
            if (!node.equals(current.self())) {
                status.put(node, statusOf(node));
            }
        }
        return status;
    }

    /** What the node knows of its rounds with {@code node}. */
    public Status statusOf(String node) {
        PeerRepair state = peer(node);
        return new Status(state.running(), state.lastCompleteStartedMillis(), state.last());
    }

    /** Repair with one peer: whether a round runs now, the start of the last complete one, and this node's last round. */
    public record Status(boolean running, long lastCompleteRoundStartedMillis, PeerRepair.Round lastRound) {
    }

    public long roundsComplete() {
        return roundsComplete.get();
    }

    public long roundsFailed() {
        return roundsFailed.get();
    }

    public long keysCompared() {
        return keysCompared.get();
    }

    public long recordsSent() {
        return recordsSent.get();
    }

    public long recordsReceived() {
        return recordsReceived.get();
    }

    /** Records read from the store for repair, for this node's rounds and for its answers to its peers'. */
    public long recordsRead() {
        return scan.read();
    }

    /** Full scans the maintained bucket hashes took (at start, after a topology change or too many changes). */
    long hashRebuilds() {
        return hashes == null ? 0 : hashes.rebuilds();
    }

    @Override
    public void close() {
        if (ticks != null) {
            ticks.dispose();
        }
        if (hashes != null) {
            hashes.close();
        }
    }
}
