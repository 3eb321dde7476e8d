package dev.kvlab.heal;

import dev.kvlab.cluster.Topology;
import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.replication.ReplicaDirectory;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The handoff's one way to send a record to other nodes: reads it here under a memory lease,
 * writes it to each of its owners, and counts the outcome in a {@link Sweep}. Used by the sweeps
 * of records this node no longer owns, a leave's passes, and the writes a leaving node forwards.
 */
final class RecordSender {

    /** Logs as the handoff, as it always has: operators filter and alert on that logger. */
    private static final Logger log = LoggerFactory.getLogger(Handoff.class);

    private final LocalStore store;
    private final ReplicaDirectory replicas;
    private final MemoryBudget budget;

    RecordSender(LocalStore store, ReplicaDirectory replicas, MemoryBudget budget) {
        this.store = store;
        this.replicas = replicas;
        this.budget = budget;
    }

    /**
     * Sends the key's record to {@code ownersOf(record)}, then waits for {@code pacer} (null: not
     * paced). The record sent, once every owner stored it; empty when the key holds nothing or an
     * owner did not store it (counted as failed, and {@code onFailure} told).
     */
    Mono<Entry> send(Topology current, byte[] key, Function<Record, List<String>> ownersOf, Sweep sweep, Pacer pacer, Runnable onFailure) {
        return Mono.usingWhen(Mono.fromSupplier(budget::lease),
                        lease -> store.get(key, lease).flatMap(record -> {
                            List<String> owners = ownersOf.apply(record);
                            Mono<Entry> sent = Flux.fromIterable(owners)
                                    .flatMap(owner -> replicas.replicaOf(owner, current).write(key, record))
                                    .then(Mono.fromSupplier(() -> {
                                        sweep.countSent();
                                        return new Entry(key, record);
                                    }));
                            return pacer == null ? sent : sent.delayUntil(entry -> pacer.after((long) record.encoded().length * owners.size()));
                        }),
                        lease -> Mono.fromRunnable(lease::release))
                .onErrorResume(error -> {
                    sweep.countFailed();
                    onFailure.run();
                    log.debug("could not hand a record of {} bytes of key to its owners: {}", key.length, error.toString());
                    return Mono.empty();
                });
    }
}
