package dev.kvlab.replication;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Entry;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.Record;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** This node's own store, called directly rather than over HTTP. */
public final class LocalReplica implements Replica {

    private final String node;
    private final LocalStore store;

    public LocalReplica(String node, LocalStore store) {
        this.node = node;
        this.store = store;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Mono<Optional<Record>> read(byte[] key, MemoryBudget.Lease lease) {
        return store.get(key, lease).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    @Override
    public Mono<Void> write(byte[] key, Record record) {
        return store.write(key, record);
    }

    @Override
    public Flux<Entry> range(byte[] start, byte[] end) {
        return store.range(start, end);
    }

    @Override
    public String toString() {
        return "local replica " + node;
    }
}
