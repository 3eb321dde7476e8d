package dev.kvlab.storage;

import java.util.ArrayList;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Env;
import org.rocksdb.IndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Priority;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksObject;
import org.rocksdb.SstFileManager;
import org.rocksdb.Statistics;
import org.rocksdb.StatsLevel;
import org.rocksdb.WriteOptions;

/**
 * Every RocksDB option kvlab sets, in one place and explained. Owns the native handles it creates
 * and closes them after the database ({@link #close()}).
 */
final class RocksOptions implements AutoCloseable {

    /** The block cache's share kept for index and filter blocks. */
    static final double HIGH_PRIORITY_SHARE = 0.5;

    /** Merges of one key in the memtable before a write folds them into a value. */
    static final int MAX_SUCCESSIVE_MERGES = 16;

    private final List<RocksObject> handles = new ArrayList<>();
    final DBOptions database;
    final ColumnFamilyOptions columnFamily;
    /** The side tables' (hints, meta): small, written with plain puts, kept apart from the records. */
    final ColumnFamilyOptions sideFamily;
    final WriteOptions writeOptions;
    final ReadOptions pointReads;
    /** Point reads that never touch a file: the memtables and the block cache, or "incomplete". */
    final ReadOptions memoryReads;
    /**
     * Point reads gathered into one MultiGet ({@link BatchedReads}): {@link #pointReads}, and a soft
     * limit on the bytes of values one MultiGet answers; keys past it come back unanswered.
     */
    final ReadOptions batchReads;
    /** Counts what the block cache answered; read by the metrics. */
    final Statistics statistics;

    RocksOptions(StorageProperties properties) {
        // One LRU cache for everything RocksDB reads from its files: data blocks, and the index and
        // filter blocks too, so its memory stays within the cache's size however much data the node
        // holds (outside it, index and filters grow with the data, about 0.6 % of it). Half the
        // cache is a high-priority pool for the index and filter blocks: random reads of more data
        // than fits evict data blocks, not the blocks that every lookup needs first.
        LRUCache blockCache = own(new LRUCache(properties.blockCacheSize().toBytes(), -1, false, HIGH_PRIORITY_SHARE));
        // 10 bits per key: about 1 % false positives, so a GET of an absent key rarely touches an
        // SST file, nor does a GET of a key look in the files that do not have it.
        BloomFilter bloom = own(new BloomFilter(10, false));
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(blockCache)
                .setFilterPolicy(bloom)
                .setCacheIndexAndFilterBlocks(true)
                .setCacheIndexAndFilterBlocksWithHighPriority(true)
                // Partitioned index and filters: a big file's index and filter are cut into 4 KiB
                // blocks cached one by one, so a lookup needs the partitions of its key only, and
                // only a small top level per file stays pinned.
                .setIndexType(IndexType.kTwoLevelIndexSearch)
                .setPartitionFilters(true)
                .setMetadataBlockSize(4 * 1024)
                .setPinTopLevelIndexAndFilter(true)
                // The newest files (L0) take most reads of fresh keys: their index and filter stay.
                .setPinL0FilterAndIndexBlocksInCache(true)
                // Small blocks suit point lookups of small values, the store's common case.
                .setBlockSize(4 * 1024);

        // The options of the records' column family (and of the default one, which only a store of
        // the first layout has data in: LegacyLayout).
        columnFamily = own(new ColumnFamilyOptions())
                .setTableFormatConfig(table)
                // A write merges its record instead of reading the stored version first; "max" keeps
                // the record that is largest as unsigned bytes, which the layout makes the newest
                // version (Record). Reads and compactions apply the merges.
                .setMergeOperatorName("max")
                // A key written over and over has its merges folded into one value once this many
                // pile up in the memtable, so its reads stay short: unbounded, a GET of a key written
                // 30 000 times since the last flush took about 1 ms. The bound costs a memtable seek
                // per write, about 10 % of the nodes' CPU in a profile of PUT at 10 125/s on three.
                .setMaxSuccessiveMerges(MAX_SUCCESSIVE_MERGES)
                .setWriteBufferSize(properties.writeBufferSize().toBytes())
                .setMaxWriteBufferNumber(properties.maxWriteBuffers())
                .setCompactionStyle(CompactionStyle.LEVEL)
                .setLevelCompactionDynamicLevelBytes(true)
                // LZ4 on every level: a GET that misses the cache decompresses one block, and LZ4
                // does that several times faster than ZSTD on the CPU we share with the server.
                // Blocks that do not shrink (random values) are stored as they are.
                .setCompressionType(CompressionType.LZ4_COMPRESSION);

        // With a file manager, RocksDB resumes by itself once a full disk has room again: it polls
        // the free space and clears the background error that stopped writes (a flush or a WAL
        // append that found no space), instead of refusing writes until the node restarts.
        SstFileManager files = own(newSstFileManager());
        sideFamily = own(new ColumnFamilyOptions())
                .setWriteBufferSize(4 * 1024 * 1024)
                .setCompressionType(CompressionType.LZ4_COMPRESSION);

        // Tickers (block cache hits and misses) for the metrics; the detailed per-call timers stay off.
        statistics = own(new Statistics());
        statistics.setStatsLevel(StatsLevel.EXCEPT_DETAILED_TIMERS);
        database = own(new DBOptions())
                .setStatistics(statistics)
                .setSstFileManager(files)
                .setCreateIfMissing(true)
                .setCreateMissingColumnFamilies(true)
                // Flushes and compactions run in the background; two fit a small machine.
                .setMaxBackgroundJobs(2)
                // Write SST files out gradually instead of in one burst at the end of a flush.
                .setBytesPerSync(1024 * 1024)
                .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                .setKeepLogFileNum(3);

        // The WAL is on (RocksDB's default and never disabled here): a write returns after its WAL
        // record has been handed to the OS, so acknowledged writes survive kill -9. With
        // syncWrites the WAL is also fsynced, which survives power loss too.
        writeOptions = own(new WriteOptions()).setSync(properties.syncWrites());
        pointReads = own(new ReadOptions());
        memoryReads = own(new ReadOptions()).setReadTier(ReadTier.BLOCK_CACHE_TIER);
        batchReads = own(new ReadOptions()).setValueSizeSoftLimit(properties.readBatch().maxBytes().toBytes());

        if (properties.backgroundLowPriority()) {
            // Flushes (HIGH pool) and compactions (LOW pool) run niced, at idle I/O class.
            Env env = database.getEnv();
            for (Priority pool : new Priority[] {Priority.HIGH, Priority.LOW}) {
                env.lowerThreadPoolCPUPriority(pool);
                env.lowerThreadPoolIOPriority(pool);
            }
        }
    }

    private static SstFileManager newSstFileManager() {
        try {
            return new SstFileManager(Env.getDefault());
        } catch (RocksDBException e) {
            throw new StorageException("cannot create RocksDB's file manager: " + e.getMessage(), e);
        }
    }

    /** Options for one range scan: big scans should not evict the hot point-lookup blocks. */
    static ReadOptions scanOptions() {
        return new ReadOptions().setFillCache(false);
    }

    private <T extends RocksObject> T own(T handle) {
        handles.add(handle);
        return handle;
    }

    @Override
    public void close() {
        for (int i = handles.size() - 1; i >= 0; i--) {
            handles.get(i).close();
        }
    }
}
