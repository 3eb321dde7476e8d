package dev.kvlab.storage;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.memory.OverBudgetException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
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
    /** Reads that need a storage thread, read together; null when each goes alone ({@link StorageProperties.ReadBatch#enabled}). */
    private final BatchedReads reads;
    /** Whether a read asks RocksDB's memory first, from how often that has answered lately. */
    private final MemoryTierChoice memoryTier;
    private final ScheduledExecutorService prober;
    /** Told the key of every record stored, while set ({@link #onWritten}). */
    private volatile Consumer<byte[]> written;
    private final RecentReading<BackgroundWork> work;
    private final RecentReading<BlockCacheCounts> blockCache;
    /** Reads answered from RocksDB's memory on the caller's thread, and reads that needed a storage thread. */
    private final LongAdder memoryReads = new LongAdder();
    private final LongAdder fileReads = new LongAdder();

    /**
     * At most {@code maxWaiting} single writes wait for their group ({@link GroupCommit}), and as
     * many reads for their batch ({@link BatchedReads}) when {@code readBatch} is enabled.
     */
    public LocalStore(RocksStore store, StorageExecutor executor, int maxWaiting, StorageProperties.ReadBatch readBatch) {
        this(store, executor, maxWaiting, readBatch, StorageProperties.MemoryReads.DEFAULTS);
    }

    /** As above, with reads asking RocksDB's memory first as {@code memoryReads} says ({@link MemoryTierChoice}). */
    public LocalStore(RocksStore store, StorageExecutor executor, int maxWaiting, StorageProperties.ReadBatch readBatch,
                      StorageProperties.MemoryReads memoryReads) {
        this.store = store;
        this.memoryTier = new MemoryTierChoice(memoryReads);
        this.executor = executor;
        this.writes = new GroupCommit(store, executor, maxWaiting);
        this.reads = readBatch.enabled() ? new BatchedReads(store, executor, maxWaiting, readBatch.maxKeys(), readBatch.maxAtOnce()) : null;
        this.work = new RecentReading<>(store::backgroundWork, BackgroundWork.NONE);
        this.blockCache = new RecentReading<>(store::blockCacheCounts, BlockCacheCounts.NONE);
        this.prober = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "kvlab-storage-health");
            thread.setDaemon(true);
            return thread;
        });
        prober.scheduleWithFixedDelay(this::probeWhileUnwritable, 1, 1, TimeUnit.SECONDS);
    }

    public static LocalStore open(StorageProperties properties) {
        RocksStore store = RocksStore.open(properties);
        return new LocalStore(store, new StorageExecutor(properties.effectiveThreads(), properties.queueCapacity()),
                properties.queueCapacity(), properties.readBatch(), properties.memoryReads());
    }

    /**
     * The record under {@code key}; empty when the key was never written here. Its bytes are held on
     * {@code lease} as soon as it is read; one the lease has no room for fails the read with
     * {@link OverBudgetException}, and is left to the garbage collector at once.
     *
     * <p>A key that RocksDB's memtables and block cache can answer for is read on the subscriber's
     * thread, without a hop to a storage thread and back (that hop cost more CPU than the read);
     * only a read that needs a file goes to the storage executor, gathered with the others that do
     * into one MultiGet ({@link BatchedReads}) unless batching is off. Large records too: a
     * coordinator takes room for all its read's answers with the first ({@link MemoryBudget.Lease#expect}),
     * so a burst of them served at once is admitted or refused whole, and the reads it refuses do
     * not queue on the storage threads ahead of the peers' reads of those it admitted.
     *
     * <p>While asking memory keeps missing (the data has outgrown the cache), reads go to the
     * storage executor without asking, but for occasional probes ({@link MemoryTierChoice}); either
     * way a read answers the same.
     */
    public Mono<Record> get(byte[] key, MemoryBudget.Lease lease) {
        return Mono.defer(() -> {
            if (memoryTier.worthTrying()) {
                MemoryRead fromMemory = store.readFromMemory(key);
                memoryTier.tried(fromMemory.answered());
                if (fromMemory.answered()) {
                    memoryReads.increment();
                    return Mono.justOrEmpty(held(fromMemory.record(), lease));
                }
            }
            fileReads.increment();
            if (reads != null) {
                return reads.read(key, lease);
            }
            return Mono.fromCallable(() -> held(store.get(key), lease)).subscribeOn(executor.scheduler());
        });
    }

    /** The record, its bytes taken on {@code lease}; {@link OverBudgetException} when it has no room. */
    static Record held(Record record, MemoryBudget.Lease lease) {
        if (record != null) {
            lease.hold(record.encoded().length);
        }
        return record;
    }

    /**
     * Stores the record unless a newer version is there; completes once the write is in the WAL.
     * Writes that arrive together are written together ({@link GroupCommit}).
     */
    public Mono<Void> write(byte[] key, Record record) {
        return writes.write(key, record).doOnSuccess(stored -> told(key));
    }

    /**
     * From now on, {@code listener} is told the key of every record stored (by {@link #write} and
     * {@link #batch}) before that write completes; {@code null} stops it. A leaving node keeps track
     * of what it has yet to hand over with it.
     */
    public void onWritten(Consumer<byte[]> listener) {
        written = listener;
    }

    private void told(byte[] key) {
        Consumer<byte[]> listener = written;
        if (listener != null) {
            listener.accept(key);
        }
    }

    /**
     * Runs the calls in order, all in one task of the storage executor (one thread hop for the
     * lot), and gives each call's outcome. Writes next to each other go to RocksDB as one write and
     * succeed or fail together; a read sees every write before it, and fails alone, for instance
     * when {@code lease} has no room for the record it read.
     */
    public Mono<List<Outcome>> batch(List<StoreOp> ops, MemoryBudget.Lease lease) {
        return Mono.fromCallable(() -> {
            Outcome[] outcomes = new Outcome[ops.size()];
            int runStart = 0;
            for (int i = 0; i < ops.size(); i++) {
                if (ops.get(i) instanceof StoreOp.Read read) {
                    writeRun(ops, runStart, i, outcomes);
                    runStart = i + 1;
                    outcomes[i] = read(read.key(), lease);
                }
            }
            writeRun(ops, runStart, ops.size(), outcomes);
            return List.of(outcomes);
        }).subscribeOn(executor.scheduler());
    }

    /** Writes {@code ops[from, to)}, all writes, as one RocksDB write, and records their outcome. */
    private void writeRun(List<StoreOp> ops, int from, int to, Outcome[] outcomes) {
        if (from == to) {
            return;
        }
        List<StoreOp.Write> run = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            run.add((StoreOp.Write) ops.get(i));
        }
        Outcome outcome;
        try {
            store.writeAll(run);
            for (StoreOp.Write write : run) {
                told(write.key());
            }
            outcome = Outcome.DONE;
        } catch (RuntimeException e) {
            outcome = new Outcome.Failed(e);
        }
        for (int i = from; i < to; i++) {
            outcomes[i] = outcome;
        }
    }

    private Outcome read(byte[] key, MemoryBudget.Lease lease) {
        try {
            return Outcome.ofRead(held(store.get(key), lease));
        } catch (RuntimeException e) {
            return new Outcome.Failed(e);
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

    /**
     * Runs {@code work} on the store in a task of the storage executor: for the node's background
     * work (hints, repair, handoff), in steps small enough not to hold a storage thread long.
     */
    public <T> Mono<T> onStorage(Function<RocksStore, T> work) {
        return Mono.fromCallable(() -> work.apply(store)).subscribeOn(executor.scheduler());
    }

    /**
     * A checkpoint of the store in {@code target} ({@link RocksStore#checkpoint}), taken on the
     * caller's thread, never a storage thread: RocksDB takes it beside reads and writes, and its
     * flush would hold a storage thread, and every request queued behind it, for as long as it runs.
     */
    public void checkpoint(Path target) {
        store.checkpoint(target);
    }

    /** A RocksDB property such as {@code rocksdb.estimate-num-keys}; NaN once the store is closed. */
    public double longProperty(String name) {
        try {
            return store.longProperty(name);
        } catch (StorageException closed) {
            return Double.NaN;
        }
    }

    /** Whether the store takes writes, and if not, why ({@link StorageHealth}). */
    public StorageHealth.State health() {
        return store.health().state();
    }

    /**
     * While the store refuses writes, tries an empty write on a storage thread, so the state clears
     * once RocksDB has resumed even when no write comes to show it. Called every second.
     */
    private void probeWhileUnwritable() {
        if (!store.health().state().writable()) {
            try {
                executor.execute(() -> {
                    try {
                        store.probeWrites();
                    } catch (StorageException stillRefused) {
                        // the state says why
                    }
                });
            } catch (RejectedExecutionException busy) {
                // the next tick tries again
            }
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

    /** RocksDB's completed flushes and compactions, for metrics. */
    BackgroundWork backgroundWork() {
        return work.get();
    }

    /** RocksDB's block cache hits and misses, for metrics. */
    BlockCacheCounts blockCacheCounts() {
        return blockCache.get();
    }

    /** Point reads answered from RocksDB's memory without a storage thread, for metrics. */
    long memoryReads() {
        return memoryReads.sum();
    }

    /** Point reads sent to a storage thread without asking RocksDB's memory first ({@link MemoryTierChoice}), for metrics. */
    long memoryTierSkipped() {
        return memoryTier.skipped();
    }

    /** Whether point reads now skip asking RocksDB's memory first, but for probes; for metrics. */
    boolean memoryTierSkipping() {
        return memoryTier.skipping();
    }

    /** Point reads that went to a storage thread (a file had to be read, or memory was not asked), for metrics. */
    long fileReads() {
        return fileReads.sum();
    }

    /** MultiGets that read batched reads ({@link BatchedReads}), for metrics; 0 when batching is off. */
    public long readBatches() {
        return reads == null ? 0 : reads.batchesRead();
    }

    /** Reads that left in batches so far, for metrics. */
    public long batchedReads() {
        return reads == null ? 0 : reads.readsBatched();
    }

    /** Calls waiting for a storage thread, single writes waiting for their group and reads for their batch included. */
    public int queuedCalls() {
        return executor.queued() + writes.waiting() + (reads == null ? 0 : reads.waiting());
    }

    @Override
    public void close() {
        prober.shutdownNow();
        executor.close();
        store.close();
    }
}
