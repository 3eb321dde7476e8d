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
    private final GroupCommit writes;

    /** At most {@code maxWaitingWrites} single writes wait for their group ({@link GroupCommit}). */
    public LocalStore(RocksStore store, StorageExecutor executor, int maxWaitingWrites) {
        this.store = store;
        this.executor = executor;
        this.writes = new GroupCommit(store, executor, maxWaitingWrites);
    }

    public static LocalStore open(StorageProperties properties) {
        RocksStore store = RocksStore.open(properties);
        return new LocalStore(store, new StorageExecutor(properties.effectiveThreads(), properties.queueCapacity()),
                properties.queueCapacity());
    }

    /** The record under {@code key}; empty when the key was never written here. */
    public Mono<Record> get(byte[] key) {
        return Mono.fromCallable(() -> store.get(key)).subscribeOn(executor.scheduler());
    }

    /**
     * Stores the record unless a newer version is there; completes once the write is in the WAL.
     * Writes that arrive together are written together ({@link GroupCommit}).
     */
    public Mono<Void> write(byte[] key, Record record) {
        return writes.write(key, record);
    }

    /**
     * Runs the calls in order, all in one task of the storage executor (one thread hop for the
     * lot): each read's record, or empty when the key was never written here; empty for a write.
     * Writes next to each other go to RocksDB as one write; a read sees every write before it.
     */
    public Mono<List<Optional<Record>>> batch(List<StoreOp> ops) {
        return Mono.fromCallable(() -> {
            List<Optional<Record>> results = new ArrayList<>(ops.size());
            List<StoreOp.Write> run = new ArrayList<>();
            for (StoreOp op : ops) {
                if (op instanceof StoreOp.Write write) {
                    run.add(write);
                    results.add(Optional.empty());
                    continue;
                }
                writeAll(run);
                results.add(Optional.ofNullable(store.get(op.key())));
            }
            writeAll(run);
            return results;
        }).subscribeOn(executor.scheduler());
    }

    /** Writes the run and empties it. */
    private void writeAll(List<StoreOp.Write> run) {
        if (!run.isEmpty()) {
            store.writeAll(run);
            run.clear();
        }
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

    /** RocksDB writes that stored single writes ({@link GroupCommit}), for metrics. */
    public long writeGroups() {
        return writes.groupsWritten();
    }

    /** Single writes stored so far, for metrics. */
    public long groupedWrites() {
        return writes.writesWritten();
    }

    /** Calls waiting for a storage thread, single writes waiting for their group included. */
    public int queuedCalls() {
        return executor.queued() + writes.waiting();
    }

    @Override
    public void close() {
        executor.close();
        store.close();
    }
}
