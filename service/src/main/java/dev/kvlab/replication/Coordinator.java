package dev.kvlab.replication;

import dev.kvlab.cluster.Topology;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import dev.kvlab.storage.Version;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Serves a client request on any node: asks the key's {@code from} replicas in parallel, answers
 * once {@code ack} of them have, and resolves reads by version (newest wins, a tombstone means
 * absent). A value that has expired by this node's clock is absent as a tombstone of its version
 * would be: the newest record decides, so an older value a replica still holds does not come back. Remote replicas bound each call by the replica timeout; the local one by its bounded
 * executor, which costs no timer per request.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
    private static final Comparator<Entry> KEY_ORDER = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());
    /** Entries buffered per node by a range merge: few, since an entry may hold a 1 MiB value. */
    private static final int MERGE_PREFETCH = 4;
    /** The key the warm-up reads from peers; reading it changes nothing. */
    private static final byte[] WARM_UP_KEY = "kvlab-warm-up".getBytes(StandardCharsets.UTF_8);

    private final TopologyProvider topology;
    private final ReplicaDirectory replicas;
    private final HybridLogicalClock clock;
    private final ReadRepair readRepair;
    private final ReplicationMetrics metrics;
    private final MissedWrites missedWrites;
    private final PreviousOwners previousOwners;
    /** Room for the warm-up's answers, which are empty: the key is never written. */
    private final MemoryBudget warmUpBudget = new MemoryBudget(1024);
    private final RecentSizes recentSizes = new RecentSizes();

    public Coordinator(TopologyProvider topology, ReplicaDirectory replicas, HybridLogicalClock clock,
                       ReadRepair readRepair, ReplicationMetrics metrics, MissedWrites missedWrites, PreviousOwners previousOwners) {
        this.topology = topology;
        this.replicas = replicas;
        this.clock = clock;
        this.readRepair = readRepair;
        this.metrics = metrics;
        this.missedWrites = missedWrites;
        this.previousOwners = previousOwners;
    }

    /**
     * The newest live record of the key; empty when absent or deleted. The records the replicas
     * answer with are held on {@code lease} ({@link Replica#read}), which the coordinator shares
     * until every replica asked has answered or failed (the late ones feed read repair); the caller
     * releases its own share once it has sent the answer.
     */
    public Mono<Record> get(byte[] key, ReplicaCount requested, MemoryBudget.Lease lease) {
        return newest(key, requested, lease).filter(this::isLive);
    }

    /** Whether the record is a value that has not expired by this node's clock, which decides for the reads it coordinates. */
    public boolean isLive(Record record) {
        return !record.isDeadAt(clock.wallMillis());
    }

    /**
     * Like {@link #get}, with a tombstone when the key's newest record is one: the read of a
     * conditional write, whose own version must come after whatever the read found
     * ({@link #putAfter}, {@link #deleteAfter}).
     */
    public Mono<Record> newest(byte[] key, ReplicaCount requested, MemoryBudget.Lease lease) {
        return Mono.defer(() -> {
            Asked asked = ask(key, requested);
            lease.share();
            // The coordinator's share of the lease is given back once, whichever comes first: every
            // replica asked has answered or failed, the quorum cannot be made, the read is refused
            // or cancelled. Given back early, it lets answers still on their way find no room (they
            // are skipped as they come) rather than hold room that others could use.
            AtomicBoolean released = new AtomicBoolean();
            Runnable release = () -> {
                if (released.compareAndSet(false, true)) {
                    lease.release();
                }
            };
            // The size this coordinator last saw of the key: what each replica's answer is expected to be.
            long lastSize = recentSizes.of(key);
            Mono<List<ReplicaAnswer>> answers;
            if (asked.replicas().size() == 1) {
                // One replica asked: its answer is the answer, and there is nothing to repair.
                answers = read(asked.replicas().getFirst(), key, lastSize, lease).map(List::of).doFinally(done -> release.run());
            } else {
                Replica own = asked.own();
                answers = (own == null
                        ? quorum(key, asked, asked.replicas().stream().map(replica -> read(replica, key, lastSize, lease)).toList(), release)
                        : admitted(key, asked, own, lastSize, lease, release))
                        .doFinally(signal -> {
                            if (signal != SignalType.ON_COMPLETE) {
                                release.run();
                            }
                        });
            }
            List<Replica> previous = previousOwnersNotAsked(key, asked);
            Mono<Record> found = counted(answers, asked.count(), "get").mapNotNull(ReplicaAnswer::newest);
            return (previous.isEmpty() ? found : withPreviousOwners(found, previous, key, asked, lease))
                    .doOnNext(newest -> clock.observe(newest.version()));
        });
    }

    /**
     * The quorum of a read whose coordinator is one of its replicas: admitted before any peer is
     * asked. Its own record comes first, and the lease takes room for it and for each peer's
     * answer of its size at once ({@link MemoryBudget.Lease#expect}), as the replicas of a key hold
     * the same record but while a write is on its way; without room for them all the read is
     * refused with {@link OverBudgetException} (503) before a peer spends anything on it. Taking
     * room answer by answer instead, a burst of large reads let every request hold part of its
     * answers and few find room for all of them, and the peers' work for the rest was thrown away
     * (503 and 504). When the own record is absent, or its read failed otherwise (a failure of that
     * replica in the quorum), the first peer's answer takes room for all the peers' answers.
     */
    private Mono<List<ReplicaAnswer>> admitted(byte[] key, Asked asked, Replica own, long lastSize, MemoryBudget.Lease lease,
                                               Runnable release) {
        List<Replica> peers = asked.replicas().stream().filter(replica -> replica != own).toList();
        if (lastSize > 0 && !lease.budgetHasRoomFor(lastSize, asked.replicas().size())) {
            // Its last record would not fit: refused before anything is read.
            metrics.readRefused();
            return Mono.error(lease.overBudget());
        }
        lease.expect(asked.replicas().size());
        return read(own, key, lastSize, lease)
                .doOnNext(answer -> recentSizes.saw(key, answer.record() == null ? 0 : answer.record().encoded().length))
                .map(OwnRead::answered)
                .onErrorResume(error -> !(error instanceof OverBudgetException), error -> Mono.just(OwnRead.failed(error)))
                .doOnError(OverBudgetException.class, refused -> metrics.readRefused())
                .flatMap(ownRead -> {
                    if (ownRead.answer() == null || ownRead.answer().record() == null) {
                        lease.expect(peers.size());
                    }
                    List<Mono<ReplicaAnswer>> calls = new ArrayList<>(asked.replicas().size());
                    calls.add(ownRead.asMono());
                    // The peers hold the own record's size but while a write is on its way.
                    long expected = ownRead.answer() != null && ownRead.answer().record() != null
                            ? ownRead.answer().record().encoded().length : lastSize;
                    peers.forEach(peer -> calls.add(read(peer, key, expected, lease)));
                    return quorum(key, asked, calls, release);
                })
                // What the lease holds next (a conditional write's copies) is not one of these
                // answers: told before the answer goes on, which may hold them at once.
                .doOnSuccess(answers -> lease.expect(0))
                .doFinally(signal -> lease.expect(0));
    }

    /** The own replica's answer, or its failure other than finding no room (which refuses the read). */
    private record OwnRead(ReplicaAnswer answer, Throwable failure) {

        static OwnRead answered(ReplicaAnswer answer) {
            return new OwnRead(answer, null);
        }

        static OwnRead failed(Throwable failure) {
            return new OwnRead(null, failure);
        }

        Mono<ReplicaAnswer> asMono() {
            return failure == null ? Mono.just(answer) : Mono.error(failure);
        }
    }

    /** The replicas' {@code calls} collected as a quorum; the late answers feed read repair, and the coordinator's share of the lease goes with the last. */
    private Mono<List<ReplicaAnswer>> quorum(byte[] key, Asked asked, List<Mono<ReplicaAnswer>> calls, Runnable release) {
        Quorum<ReplicaAnswer> quorum = Quorum.collect(asked.count(), calls);
        quorum.all().doFinally(done -> release.run()).subscribe(all -> readRepair.repair(key, all));
        return quorum.enough();
    }

    /**
     * Stores the value (its array made by {@link Record#newValueArray}, held on {@code lease}) under a
     * new version. The copies on their way to remote replicas are held on the lease too, which the
     * coordinator shares until every replica asked has answered or failed: the calls are not
     * cancelled when the quorum is reached.
     */
    public Mono<Void> put(byte[] key, byte[] valueArray, ReplicaCount requested, MemoryBudget.Lease lease) {
        return put(key, valueArray, requested, null, lease);
    }

    /**
     * Stores the value as {@link #put} does, expiring {@code ttl} after its version's wall-clock
     * time unless {@code ttl} is null: then the array has {@link Record#MAX_HEADER_BYTES} free in
     * front of the value.
     */
    public Mono<Void> put(byte[] key, byte[] valueArray, ReplicaCount requested, Duration ttl, MemoryBudget.Lease lease) {
        return Mono.defer(() -> {
            ReplicaCount count = countOf(requested);
            return write(key, valueRecord(clock.now(), count.from(), valueArray, ttl), count, "put", lease);
        });
    }

    private static Record valueRecord(Version version, int from, byte[] valueArray, Duration ttl) {
        if (ttl == null) {
            return Record.value(version, from, valueArray);
        }
        return Record.expiringValue(version, from, HybridLogicalClock.wallMillisOf(version) + ttl.toMillis(), valueArray);
    }

    /** Writes a tombstone under a new version. */
    public Mono<Void> delete(byte[] key, ReplicaCount requested) {
        return Mono.defer(() -> {
            ReplicaCount count = countOf(requested);
            return write(key, Record.tombstone(clock.now(), count.from()), count, "delete", null);
        });
    }

    /**
     * {@link #put} (expiring after {@code ttl} unless null), under a version newer than {@code after} (the version a conditional write's
     * read found; null when it found none), which it answers with.
     *
     * @throws ClockBehindException when this node's clock cannot give such a version
     */
    public Mono<Version> putAfter(byte[] key, byte[] valueArray, ReplicaCount requested, Duration ttl, MemoryBudget.Lease lease,
                                  Version after) {
        return Mono.defer(() -> {
            ReplicaCount count = countOf(requested);
            Version version = versionAfter(after);
            return write(key, valueRecord(version, count.from(), valueArray, ttl), count, "put", lease).thenReturn(version);
        });
    }

    /** {@link #delete}, under a version newer than {@code after}, like {@link #putAfter}. */
    public Mono<Version> deleteAfter(byte[] key, ReplicaCount requested, Version after) {
        return Mono.defer(() -> {
            ReplicaCount count = countOf(requested);
            Version version = versionAfter(after);
            return write(key, Record.tombstone(version, count.from()), count, "delete", null).thenReturn(version);
        });
    }

    /**
     * A new version after {@code after}. The clock has observed {@code after} in {@link #newest},
     * unless it was further ahead of this node's clock than the cluster tolerates: then a write
     * made now would lose to it, and is refused instead of being answered as done.
     */
    private Version versionAfter(Version after) {
        Version version = clock.now();
        if (after != null && !version.isNewerThan(after)) {
            throw new ClockBehindException(after, version);
        }
        return version;
    }

    private Mono<Void> write(byte[] key, Record record, ReplicaCount requested, String operation, MemoryBudget.Lease lease) {
        Asked asked = ask(key, requested);
        if (lease != null) {
            long remotes = asked.replicas().stream().filter(replica -> !(replica instanceof LocalReplica)).count();
            lease.hold(remotes * record.encoded().length);
            lease.share();
        }
        Runnable done = lease == null ? () -> { } : lease::release;
        Mono<?> acknowledged;
        if (asked.replicas().size() == 1) {
            acknowledged = write(asked.replicas().getFirst(), key, record).doFinally(signal -> done.run());
        } else {
            Quorum<Replica> quorum = Quorum.collect(asked.count(), asked.replicas().stream().map(replica -> write(replica, key, record)).toList());
            quorum.all().doFinally(signal -> done.run()).subscribe();
            acknowledged = quorum.enough();
        }
        return counted(acknowledged, asked.count(), operation).then();
    }

    /** The replica's answer, its record expected at {@code expectedBytes}. */
    private Mono<ReplicaAnswer> read(Replica replica, byte[] key, long expectedBytes, MemoryBudget.Lease lease) {
        return replica.read(key, expectedBytes, lease)
                .map(found -> new ReplicaAnswer(replica, found.orElse(null)))
                .doOnError(metrics::replicaFailed);
    }

    /**
     * The key's owners before the topology last changed that this read does not ask already: while
     * records move to their new owners, a write acknowledged before the change may be held by the
     * old owners alone (the new ones may even hold an older version of it). Every other node when
     * this node does not know the topology before (it is new, or its volume was empty). Empty
     * outside the window after a change, and for keys that kept their owners.
     */
    private List<Replica> previousOwnersNotAsked(byte[] key, Asked asked) {
        List<String> before = previousOwners.of(key, asked.count().from());
        if (before.isEmpty()) {
            return List.of();
        }
        // Plain loops, no lists in between: on a new node, every read comes here for the window's length.
        Topology current = topology.current();
        List<Replica> notAsked = List.of();
        for (String node : before) {
            // A node whose leave is finished handed every record over: asking it would only wait for a node that is gone.
            if (!isAsked(asked, node) && !topology.hasLeft(node)) {
                if (notAsked.isEmpty()) {
                    notAsked = new ArrayList<>(before.size());
                }
                notAsked.add(replicas.replicaOf(node, current));
            }
        }
        return notAsked;
    }

    private static boolean isAsked(Asked asked, String node) {
        for (Replica replica : asked.replicas()) {
            if (replica.node().equals(node)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The newer of the quorum's answer and the previous owners' (asked in parallel with it), so a
     * record that has not moved yet is not shadowed by an older copy on its new owners. When
     * neither has the key, the owners now are asked once more, since a move may have ended
     * meanwhile (a record leaves its old owner only once its new owners hold it). Previous owners
     * that fail are left out: this is a fallback, not a quorum.
     */
    private Mono<Record> withPreviousOwners(Mono<Record> quorum, List<Replica> previous, byte[] key, Asked asked, MemoryBudget.Lease lease) {
        Mono<Optional<Record>> before = newestOf(previous, key, lease).map(Optional::of).defaultIfEmpty(Optional.empty());
        return quorum.map(Optional::of).defaultIfEmpty(Optional.empty())
                .zipWith(before, (now, old) -> {
                    if (old.isPresent() && (now.isEmpty() || old.get().version().isNewerThan(now.get().version()))) {
                        metrics.readFromPreviousOwners();
                        return old;
                    }
                    return now;
                })
                .flatMap(found -> found.map(Mono::just).orElseGet(() -> newestOf(asked.replicas(), key, lease)));
    }

    private Mono<Record> newestOf(List<Replica> asked, byte[] key, MemoryBudget.Lease lease) {
        long lastSize = recentSizes.of(key);
        return Flux.fromIterable(asked)
                .flatMap(replica -> read(replica, key, lastSize, lease).onErrorResume(unreachable -> Mono.empty()))
                .collectList()
                .mapNotNull(ReplicaAnswer::newest);
    }

    /** A remote replica that misses the write (its call failed or timed out) gets a hint of it, unless it refused its version. */
    private Mono<Replica> write(Replica replica, byte[] key, Record record) {
        return replica.write(key, record).thenReturn(replica).doOnError(error -> {
            metrics.replicaFailed(error);
            if (!(replica instanceof LocalReplica) && !(error instanceof ReplicaRefusedException refused
                    && refused.reason() == ReplicaRefusedException.Reason.VERSION_AHEAD)) {
                missedWrites.missed(replica.node(), key, record);
            }
        });
    }

    /** A request's {@code ack/from} and the key's first {@code from} replicas it goes to; {@code own}: this node's among them, or null. */
    private record Asked(ReplicaCount count, List<Replica> replicas, Replica own) {
    }

    /**
     * The request's {@code ack/from}: {@code requested}, or the cluster's default quorum when null;
     * checked before a write makes its record, which cannot hold a {@code from} beyond {@link Record#MAX_FROM}.
     */
    private ReplicaCount countOf(ReplicaCount requested) {
        return satisfiable(requested, topology.current());
    }

    /** {@code requested}, or the default quorum when null; an {@link UnsatisfiableReplicasException} when {@code current} cannot keep it. */
    private static ReplicaCount satisfiable(ReplicaCount requested, Topology current) {
        ReplicaCount count = requested != null ? requested : ReplicaCount.quorumOf(current.size());
        if (count.from() > current.size()) {
            throw new UnsatisfiableReplicasException(count, current.size());
        }
        if (count.from() > Record.MAX_FROM) {
            throw new UnsatisfiableReplicasException("replicas=" + count + ": a key is kept on at most " + Record.MAX_FROM + " replicas");
        }
        return count;
    }

    /** {@code requested == null} means the cluster's default quorum. */
    private Asked ask(byte[] key, ReplicaCount requested) {
        Topology current = topology.current();
        ReplicaCount count = satisfiable(requested, current);
        List<Replica> asked = new ArrayList<>(count.from());
        Replica own = null;
        for (String node : current.replicasFor(key, count.from())) {
            Replica replica = replicas.replicaOf(node, current);
            asked.add(replica);
            if (node.equals(current.self())) {
                own = replica;
            }
        }
        return new Asked(count, asked, own);
    }

    /**
     * Any failure to gather {@code ack} answers is a 504, counted by operation; a request this
     * coordinator had no room for is a 503 of its own ({@link OverBudgetException}), not counted.
     */
    private <T> Mono<T> counted(Mono<T> answers, ReplicaCount count, String operation) {
        return answers
                .onErrorMap(error -> !(error instanceof NotEnoughReplicasException) && !(error instanceof OverBudgetException),
                        error -> new NotEnoughReplicasException(count, 0, List.of(error)))
                .doOnError(error -> !(error instanceof OverBudgetException), error -> metrics.quorumFailed(operation));
    }

    /**
     * The live entries of {@code [start, end)} across the cluster, in key order, each once with its
     * newest value: a k-way merge of every node's sorted stream, pulled as the client reads. A node
     * that cannot be reached when the range starts is left out (the other replicas of its keys
     * still answer); a node that fails midway fails the range, rather than end it short silently.
     */
    public Flux<Entry> range(byte[] start, byte[] end) {
        return Flux.defer(() -> {
            Topology current = topology.current();
            if (current.size() == 1) {
                return liveOnly(replicas.replicaOf(current.self(), current).range(start, end));
            }
            List<Flux<Entry>> streams = new ArrayList<>(current.size());
            for (String node : current.nodes()) {
                Replica replica = replicas.replicaOf(node, current);
                streams.add(node.equals(current.self()) ? replica.range(start, end) : skippedIfUnreachable(replica, start, end));
            }
            @SuppressWarnings("unchecked")
            Flux<Entry>[] sources = streams.toArray(Flux[]::new);
            return liveOnly(Flux.mergeComparing(MERGE_PREFETCH, KEY_ORDER, sources)
                    .bufferUntilChanged(Entry::key, Arrays::equals)
                    .map(Coordinator::newestOf));
        });
    }

    /**
     * Opens a connection to every peer and runs the replica client's code once, in the background,
     * so the first client requests after a start do not pay for it (on a busy machine a cold first
     * call to a peer took longer than the 1 s replica timeout). Failures are ignored: a peer that is
     * down is simply not warmed.
     */
    public void warmUpPeers() {
        Topology current = topology.current();
        for (String node : current.nodes()) {
            if (!node.equals(current.self())) {
                replicas.replicaOf(node, current).read(WARM_UP_KEY, warmUpBudget.lease())
                        .timeout(Duration.ofSeconds(10))
                        .subscribe(found -> log.debug("warmed up {}", node), error -> log.debug("could not warm up {}: {}", node, error.toString()));
            }
        }
    }

    private static Flux<Entry> skippedIfUnreachable(Replica replica, byte[] start, byte[] end) {
        return Flux.defer(() -> {
            AtomicBoolean started = new AtomicBoolean();
            return replica.range(start, end)
                    .doOnNext(entry -> started.set(true))
                    .onErrorResume(error -> {
                        if (started.get()) {
                            return Flux.error(error);
                        }
                        log.warn("range leaves out {}: {}", replica, error.toString());
                        return Flux.empty();
                    });
        });
    }

    private static Entry newestOf(List<Entry> copies) {
        Entry newest = copies.getFirst();
        for (Entry copy : copies) {
            if (copy.record().version().isNewerThan(newest.record().version())) {
                newest = copy;
            }
        }
        return newest;
    }

    /** The entries whose newest record holds a value: no tombstone, and not expired by this node's clock when it comes. */
    private Flux<Entry> liveOnly(Flux<Entry> entries) {
        return entries.filter(entry -> !entry.record().isDeadAt(clock.wallMillis()));
    }
}
