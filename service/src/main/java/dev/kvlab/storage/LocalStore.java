package dev.kvlab.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The node's store as the rest of the service sees it: non-blocking calls whose RocksDB work runs
 * on the {@link StorageExecutor}. Closing it drains the executor before RocksDB closes.
 */
public final class LocalStore implements AutoCloseable {

    private final RocksStore store;
    private final StorageExecutor executor;

    public LocalStore(RocksStore store, StorageExecutor executor) {
        this.store = store;
        this.executor = executor;
    }

    public static LocalStore open(StorageProperties properties) {
        RocksStore store = RocksStore.open(properties);
        return new LocalStore(store, new StorageExecutor(properties.effectiveThreads(), properties.queueCapacity()));
    }

    /** The record under {@code key}; empty when the key was never written here. */
    public Mono<Record> get(byte[] key) {
        return Mono.fromCallable(() -> store.get(key)).subscribeOn(executor.scheduler());
    }

    /** Stores the record unless a newer version is there; completes once the write is in the WAL. */
    public Mono<Void> write(byte[] key, Record record) {
        return Mono.<Void>fromRunnable(() -> store.write(key, record)).subscribeOn(executor.scheduler());
    }

    /**
     * Runs the calls in order, all in one task of the storage executor (one thread hop for the
     * lot): each read's record, or empty when the key was never written here; empty for a write.
     */
    public Mono<List<Optional<Record>>> batch(List<StoreOp> ops) {
        return Mono.fromCallable(() -> {
            List<Optional<Record>> results = new ArrayList<>(ops.size());
            for (StoreOp op : ops) {
                results.add(switch (op) {
                    case StoreOp.Read read -> Optional.ofNullable(store.get(read.key()));
                    case StoreOp.Write write -> {
                        store.write(write.key(), write.record());
                        yield Optional.empty();
                    }
                });
            }
            return results;
        }).subscribeOn(executor.scheduler());
    }

    /**
     * The records in {@code [start, end)} in key order, tombstones included, read as the subscriber
     * requests them. Cancelling the stream closes the RocksDB iterator.
     */
    public Flux<Entry> range(byte[] start, byte[] end) {
        return Flux.using(() -> store.range(start, end), cursor -> Flux.fromIterable(() -> cursor), RangeCursor::close)
                .subscribeOn(executor.scheduler());
    }

    /** A RocksDB property such as {@code rocksdb.estimate-num-keys}; NaN once the store is closed. */
    public double longProperty(String name) {
        try {
            return store.longProperty(name);
        } catch (StorageException closed) {
            return Double.NaN;
        }
    }

    public int queuedCalls() {
        return executor.queued();
    }

    @Override
    public void close() {
        executor.close();
        store.close();
    }
}
