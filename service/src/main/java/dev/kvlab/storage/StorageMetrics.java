package dev.kvlab.storage;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * RocksDB's own figures, its completed flushes and compactions, the storage queue and the grouping
 * of writes, read when Prometheus scrapes.
 */
public final class StorageMetrics implements MeterBinder {

    /** RocksDB properties worth watching, with what they mean. */
    private static final Map<String, String> PROPERTIES = Map.of(
            "rocksdb.estimate-num-keys", "Estimated keys (values and tombstones)",
            "rocksdb.total-sst-files-size", "Bytes in SST files",
            "rocksdb.cur-size-all-mem-tables", "Bytes in memtables",
            "rocksdb.block-cache-usage", "Bytes in the block cache",
            "rocksdb.estimate-pending-compaction-bytes", "Bytes compaction still has to rewrite",
            "rocksdb.num-running-compactions", "Compactions running now",
            "rocksdb.estimate-table-readers-mem", "Bytes the open SST files hold outside the block cache (pinned index and filter tops)");

    private static final String READS = "Point reads of records: answered from RocksDB's memtables and block cache on the"
            + " calling thread (cache), or on a storage thread because a file had to be read or memory was not asked (disk;"
            + " the OS may still have it cached)";

    private final LocalStore store;

    public StorageMetrics(LocalStore store) {
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        PROPERTIES.forEach((property, description) -> Gauge.builder("kvlab.rocksdb", store, s -> s.longProperty(property))
                .description(description)
                .tag("property", property.substring("rocksdb.".length()))
                .register(registry));
        Gauge.builder("kvlab.storage.writable", store, s -> s.health().writable() ? 1 : 0)
                .description("1 while the store takes writes, 0 while it refuses them (a full disk: writes answer 507)")
                .register(registry);
        Gauge.builder("kvlab.storage.queued", store, LocalStore::queuedCalls)
                .description("Storage calls waiting for a storage thread, single writes waiting for their group included")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.writes", store, LocalStore::groupedWrites)
                .description("Single writes (a coordinator's own replica) stored, in groups")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.write.groups", store, LocalStore::writeGroups)
                .description("RocksDB writes that stored the single writes: writes per group = writes / groups")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.batched.reads", store, LocalStore::batchedReads)
                .description("Reads that needed a storage thread and were read together with others (kvlab.storage.read-batch)")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.read.batches", store, LocalStore::readBatches)
                .description("MultiGets that read the batched reads: reads per batch = batched reads / batches")
                .register(registry);
        FunctionCounter.builder("kvlab.rocksdb.flushes", store, s -> s.backgroundWork().flushes())
                .description("Memtable flushes RocksDB completed (every column family)")
                .register(registry);
        FunctionCounter.builder("kvlab.rocksdb.flush", store, s -> s.backgroundWork().flushBytes())
                .baseUnit("bytes")
                .description("Bytes of the SST files flushes wrote")
                .register(registry);
        FunctionCounter.builder("kvlab.rocksdb.compactions", store, s -> s.backgroundWork().compactions())
                .description("Compactions RocksDB completed (every column family; a file moved down a level unrewritten is none)")
                .register(registry);
        FunctionCounter.builder("kvlab.rocksdb.compaction", store, s -> s.backgroundWork().compactionBytes())
                .baseUnit("bytes")
                .description("Bytes of the SST files compactions wrote")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.reads", store, LocalStore::memoryReads)
                .description(READS)
                .tag("tier", "cache")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.reads", store, LocalStore::fileReads)
                .description(READS)
                .tag("tier", "disk")
                .register(registry);
        FunctionCounter.builder("kvlab.storage.memory.tier.skipped", store, LocalStore::memoryTierSkipped)
                .description("Point reads sent to a storage thread without asking RocksDB's memory first, because that has"
                        + " kept missing lately (kvlab.storage.memory-reads)")
                .register(registry);
        Gauge.builder("kvlab.storage.memory.tier.skipping", store, s -> s.memoryTierSkipping() ? 1 : 0)
                .description("1 while point reads skip asking RocksDB's memory first (but for probes), 0 while they ask it")
                .register(registry);
        blockCache(registry, "data", BlockCacheCounts::dataHits, BlockCacheCounts::dataMisses);
        blockCache(registry, "index", BlockCacheCounts::indexHits, BlockCacheCounts::indexMisses);
        blockCache(registry, "filter", BlockCacheCounts::filterHits, BlockCacheCounts::filterMisses);
    }

    private void blockCache(MeterRegistry registry, String block, ToLongFunction<BlockCacheCounts> hits,
                            ToLongFunction<BlockCacheCounts> misses) {
        FunctionCounter.builder("kvlab.rocksdb.block.cache.hits", store, s -> hits.applyAsLong(s.blockCacheCounts()))
                .description("Blocks RocksDB found in its block cache, by kind of block")
                .tag("block", block)
                .register(registry);
        FunctionCounter.builder("kvlab.rocksdb.block.cache.misses", store, s -> misses.applyAsLong(s.blockCacheCounts()))
                .description("Blocks RocksDB had to read from a file, by kind of block")
                .tag("block", block)
                .register(registry);
    }
}
