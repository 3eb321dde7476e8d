package dev.kvlab.storage;

import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.PositiveOrZero;
import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.ConstructorBinding;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * {@code kvlab.storage.*}: where and how a node keeps its data.
 *
 * @param dir             the RocksDB directory; created when missing, one per node
 * @param blockCacheSize  shared LRU cache for data, index and filter blocks; the bulk of RocksDB's
 *                        memory beside the memtables (off-heap, not counted in -Xmx)
 * @param writeBufferSize size of one memtable; up to {@code maxWriteBuffers} of them exist at once
 * @param maxWriteBuffers memtables kept before writes stall on flushing
 * @param syncWrites      fsync the write-ahead log before acknowledging a write. Off by default:
 *                        every write still reaches the WAL through write(2) before it is
 *                        acknowledged, which survives a crash of the process (kill -9) but not of
 *                        the machine; turn it on to survive power loss at the cost of write latency
 * @param threads         threads that run RocksDB calls, off the Netty event loops; 0 picks twice
 *                        the number of processors
 * @param queueCapacity   storage calls waiting for a thread, and apart from them single writes
 *                        waiting for their group ({@link GroupCommit}); beyond it a node sheds
 *                        load with 503
 * @param backgroundLowPriority run RocksDB's flushes and compactions at the lowest CPU and I/O
 *                        priority, so that on a machine with few cores they use what requests leave
 *                        idle instead of taking a core from them in bursts
 * @param readBatch       how point reads that miss RocksDB's memory are gathered ({@link BatchedReads})
 * @param memoryReads     when a point read first asks RocksDB's memory on the caller's thread
 *                        ({@link MemoryTierChoice})
 */
@Validated
@ConfigurationProperties("kvlab.storage")
public record StorageProperties(
        @NotNull @DefaultValue("./data/node") Path dir,
        @NotNull @DefaultValue("64MB") DataSize blockCacheSize,
        @NotNull @DefaultValue("32MB") DataSize writeBufferSize,
        @Min(2) @DefaultValue("3") int maxWriteBuffers,
        @DefaultValue("false") boolean syncWrites,
        @PositiveOrZero @DefaultValue("0") int threads,
        @Min(1) @DefaultValue("4096") int queueCapacity,
        @DefaultValue("true") boolean backgroundLowPriority,
        @NotNull @Valid @DefaultValue ReadBatch readBatch,
        @NotNull @Valid @DefaultValue MemoryReads memoryReads) {

    @ConstructorBinding
    public StorageProperties {
        requireAtLeast("kvlab.storage.block-cache-size", blockCacheSize, DataSize.ofMegabytes(1));
        requireAtLeast("kvlab.storage.write-buffer-size", writeBufferSize, DataSize.ofMegabytes(1));
    }

    /** Settings written out by hand (tests, probes), with the memory reads' defaults. */
    public StorageProperties(Path dir, DataSize blockCacheSize, DataSize writeBufferSize, int maxWriteBuffers,
                             boolean syncWrites, int threads, int queueCapacity, boolean backgroundLowPriority,
                             ReadBatch readBatch) {
        this(dir, blockCacheSize, writeBufferSize, maxWriteBuffers, syncWrites, threads, queueCapacity,
                backgroundLowPriority, readBatch, MemoryReads.DEFAULTS);
    }

    /** The same store's settings in another directory. */
    public StorageProperties withDir(Path other) {
        return new StorageProperties(other, blockCacheSize, writeBufferSize, maxWriteBuffers, syncWrites, threads,
                queueCapacity, backgroundLowPriority, readBatch, memoryReads);
    }

    /**
     * {@code kvlab.storage.read-batch.*}: point reads that RocksDB's memory cannot answer, waiting
     * together for a storage thread and read there with one MultiGet ({@link BatchedReads}).
     *
     * @param enabled  gather them (the default: with the memory tier skipped while it misses, batched
     *                 reads measured less CPU per GET and a shorter p99 beyond the cache); off, each is
     *                 a storage task of its own
     * @param maxKeys  keys one MultiGet reads at most; the rest wait for the next
     * @param maxBytes bytes of values one MultiGet answers at most (RocksDB's value size soft limit:
     *                 the value that crosses it is the last); keys beyond it are read alone, one
     *                 after the other, so a batch of large records never holds more than this at once
     * @param maxAtOnce batches read at the same time, each on a storage thread of its own: a read that
     *                 comes while they all run waits for the first to finish and leaves with the next
     */
    public record ReadBatch(
            @DefaultValue("true") boolean enabled,
            @Min(1) @DefaultValue("32") int maxKeys,
            @NotNull @DefaultValue("1MB") DataSize maxBytes,
            @Min(1) @DefaultValue("2") int maxAtOnce) {

        public static final ReadBatch DEFAULTS = new ReadBatch(true, 32, DataSize.ofMegabytes(1), 2);

        public ReadBatch {
            requireAtLeast("kvlab.storage.read-batch.max-bytes", maxBytes, DataSize.ofKilobytes(1));
        }
    }

    /**
     * {@code kvlab.storage.memory-reads.*}: a point read first asks RocksDB's memtables and block
     * cache on the caller's thread, and goes to a storage thread only when a file must be read. When
     * the data has outgrown the cache that attempt mostly misses, after walking the index and filter
     * blocks the storage read walks again; adaptively, reads stop trying while it keeps missing
     * ({@link MemoryTierChoice}).
     *
     * @param adaptive   skip the attempt while its recent hit rate is under {@code minHitRate}, but for
     *                   one read in {@code probeEvery}; false: every read tries memory first
     * @param minHitRate the share of attempts memory must answer for every read to keep trying
     * @param window     attempts the hit rate is taken over; while skipping, that many probes
     * @param probeEvery while skipping, one read in this many still tries memory, so the choice sees
     *                   the working set come back into the cache
     */
    public record MemoryReads(
            @DefaultValue("true") boolean adaptive,
            @DecimalMin("0.0") @DecimalMax("1.0") @DefaultValue("0.25") double minHitRate,
            @Min(1) @DefaultValue("128") int window,
            @Min(2) @DefaultValue("16") int probeEvery) {

        public static final MemoryReads DEFAULTS = new MemoryReads(true, 0.25, 128, 16);

        public MemoryReads {
            if (!(minHitRate >= 0 && minHitRate <= 1)) {
                throw new IllegalArgumentException("kvlab.storage.memory-reads.min-hit-rate must be within 0..1, was " + minHitRate);
            }
            if (window < 1 || probeEvery < 2) {
                throw new IllegalArgumentException("kvlab.storage.memory-reads.window must be at least 1 and probe-every at least 2, were "
                        + window + " and " + probeEvery);
            }
        }
    }

    /** The number of storage threads after resolving {@code 0} to the default. */
    public int effectiveThreads() {
        return threads > 0 ? threads : 2 * Runtime.getRuntime().availableProcessors();
    }

    private static void requireAtLeast(String name, DataSize value, DataSize minimum) {
        if (value != null && value.compareTo(minimum) < 0) {
            throw new IllegalArgumentException(name + " must be at least " + minimum + ", was " + value);
        }
    }
}
