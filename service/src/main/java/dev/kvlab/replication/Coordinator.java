package dev.kvlab.replication;

import dev.kvlab.cluster.Topology;
import dev.kvlab.cluster.TopologyProvider;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Serves a client request on any node: asks the key's {@code from} replicas in parallel, answers
 * once {@code ack} of them have, and resolves reads by version (newest wins, a tombstone means
 * absent). Each replica call is bounded by the replica timeout.
 */
public final class Coordinator {

    private static final Logger log = LoggerFactory.getLogger(Coordinator.class);

    private final TopologyProvider topology;
    private final ReplicaDirectory replicas;
    private final HybridLogicalClock clock;
    private final ReadRepair readRepair;
    private final Duration timeout;

    public Coordinator(TopologyProvider topology, ReplicaDirectory replicas, HybridLogicalClock clock,
                       ReadRepair readRepair, Duration timeout) {
        this.topology = topology;
        this.replicas = replicas;
        this.clock = clock;
        this.readRepair = readRepair;
        this.timeout = timeout;
    }

    /** The newest live record of the key; empty when absent or deleted. */
    public Mono<Record> get(byte[] key, ReplicaCount requested) {
        return Mono.defer(() -> {
            Quorum<ReplicaAnswer> quorum = ask(key, requested, replica -> replica.read(key)
                    .map(found -> new ReplicaAnswer(replica, found.orElse(null))));
            quorum.all().subscribe(answers -> readRepair.repair(key, answers));
            return quorum.enough().mapNotNull(answers -> {
                Record newest = ReplicaAnswer.newest(answers);
                if (newest == null) {
                    return null;
                }
                clock.observe(newest.version());
                return newest.isTombstone() ? null : newest;
            });
        });
    }

    /** Stores the value (its array made by {@link Record#newValueArray}) under a new version. */
    public Mono<Void> put(byte[] key, byte[] valueArray, ReplicaCount requested) {
        return Mono.defer(() -> write(key, Record.value(clock.now(), valueArray), requested));
    }

    /** Writes a tombstone under a new version. */
    public Mono<Void> delete(byte[] key, ReplicaCount requested) {
        return Mono.defer(() -> write(key, Record.tombstone(clock.now()), requested));
    }

    private Mono<Void> write(byte[] key, Record record, ReplicaCount requested) {
        return ask(key, requested, replica -> replica.write(key, record).thenReturn(replica)).enough().then();
    }

    private <T> Quorum<T> ask(byte[] key, ReplicaCount requested, Function<Replica, Mono<T>> call) {
        Topology current = topology.current();
        ReplicaCount count = requested != null ? requested : ReplicaCount.quorumOf(current.size());
        if (count.from() > current.size()) {
            throw new UnsatisfiableReplicasException(count, current.size());
        }
        List<Mono<T>> calls = new ArrayList<>(count.from());
        for (String node : current.replicasFor(key, count.from())) {
            calls.add(call.apply(replicas.replicaOf(node, current)).timeout(timeout));
        }
        return Quorum.collect(count, calls);
    }

    /**
     * The live entries of {@code [start, end)} across the cluster, in key order, each once with its
     * newest value: a k-way merge of every node's sorted stream. A node that cannot be reached, or
     * fails midway, is left out; the others' copies of its keys still appear.
     */
    public Flux<Entry> range(byte[] start, byte[] end) {
        return Flux.defer(() -> {
            Topology current = topology.current();
            if (current.size() == 1) {
                return dropTombstones(replicas.replicaOf(current.self(), current).range(start, end));
            }
            List<Flux<Entry>> streams = new ArrayList<>(current.size());
            for (String node : current.nodes()) {
                Replica replica = replicas.replicaOf(node, current);
                Flux<Entry> stream = replica.range(start, end);
                streams.add(node.equals(current.self()) ? stream : stream.onErrorResume(error -> {
                    log.warn("range over {} left out {}: {}", replica, node, error.toString());
                    return Flux.empty();
                }));
            }
            @SuppressWarnings("unchecked")
            Flux<Entry>[] sources = streams.toArray(Flux[]::new);
            Flux<Entry> newestPerKey = Flux.mergeComparing(ENTRY_ORDER, sources)
                    .bufferUntilChanged(Entry::key, Arrays::equals)
                    .map(Coordinator::newestOf);
            return dropTombstones(newestPerKey);
        });
    }

    private static final java.util.Comparator<Entry> ENTRY_ORDER = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());

    private static Entry newestOf(List<Entry> copies) {
        Entry newest = copies.getFirst();
        for (Entry copy : copies) {
            if (copy.record().version().isNewerThan(newest.record().version())) {
                newest = copy;
            }
        }
        return newest;
    }

    private static Flux<Entry> dropTombstones(Flux<Entry> entries) {
        return entries.filter(entry -> !entry.record().isTombstone());
    }

    public int clusterSize() {
        return topology.current().size();
    }
}
