package dev.kvlab.replication;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.Record;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** One node's copy of the data, local or behind the network. Calls fail with an error, never hang silently. */
public interface Replica {

    /** The node this replica lives on, as the topology names it. */
    String node();

    /**
     * The record under {@code key}, a tombstone included; empty Optional when the replica never saw
     * the key. The record's bytes are held on {@code lease} before it is handed over; a record the
     * lease has no room for fails the read with {@link dev.kvlab.memory.OverBudgetException}.
     */
    Mono<Optional<Record>> read(byte[] key, MemoryBudget.Lease lease);

    /**
     * {@link #read(byte[], MemoryBudget.Lease)}, told how large the record is expected to be (0:
     * not known), so that a remote replica can keep a small read from queuing behind large ones.
     */
    default Mono<Optional<Record>> read(byte[] key, long expectedBytes, MemoryBudget.Lease lease) {
        return read(key, lease);
    }

    /** Stores {@code record} unless the replica has a newer version; completes once it is durable there. */
    Mono<Void> write(byte[] key, Record record);

    /** The replica's records in {@code [start, end)}, tombstones included, in key order. */
    Flux<Entry> range(byte[] start, byte[] end);
}
