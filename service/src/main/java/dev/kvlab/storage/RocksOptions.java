package dev.kvlab.storage;

import java.util.ArrayList;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksObject;
import org.rocksdb.WriteOptions;

/**
 * Every RocksDB option kvlab sets, in one place and explained. Owns the native handles it creates
 * and closes them after the database ({@link #close()}).
 */
final class RocksOptions implements AutoCloseable {

    private final List<RocksObject> handles = new ArrayList<>();
    final Options options;
    final WriteOptions writeOptions;
    final ReadOptions pointReads;

    RocksOptions(StorageProperties properties) {
        // One LRU cache for data, index and filter blocks, so its size bounds RocksDB's read memory.
        LRUCache blockCache = own(new LRUCache(properties.blockCacheSize().toBytes()));
        // 10 bits per key: about 1 % false positives, so a GET of an absent key (and the version
        // check before every write of a new key) rarely touches an SST file.
        BloomFilter bloom = own(new BloomFilter(10, false));
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(blockCache)
                .setFilterPolicy(bloom)
                // Index and filter blocks live in (and are bounded by) the cache instead of the heap
                // of RocksDB; the top-level ones of L0 stay pinned so hot lookups do not miss.
                .setCacheIndexAndFilterBlocks(true)
                .setPinL0FilterAndIndexBlocksInCache(true)
                // Small blocks suit point lookups of small values, the store's common case.
                .setBlockSize(4 * 1024);

        options = own(new Options())
                .setCreateIfMissing(true)
                .setTableFormatConfig(table)
                .setWriteBufferSize(properties.writeBufferSize().toBytes())
                .setMaxWriteBufferNumber(properties.maxWriteBuffers())
                .setCompactionStyle(CompactionStyle.LEVEL)
                .setLevelCompactionDynamicLevelBytes(true)
                // LZ4 is cheap on the CPU we share with the server; the bottom level, where most
                // data ends up, gets ZSTD's better ratio.
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                // Flushes and compactions run in the background; two fit a small machine.
                .setMaxBackgroundJobs(2)
                // Write SST files out gradually instead of in one burst at the end of a flush.
                .setBytesPerSync(1024 * 1024)
                .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                .setKeepLogFileNum(3);

        // The WAL is on (RocksDB's default and never disabled here): a put returns after its WAL
        // record has been handed to the OS, so acknowledged writes survive kill -9. With
        // syncWrites the WAL is also fsynced, which survives power loss too.
        writeOptions = own(new WriteOptions()).setSync(properties.syncWrites());
        pointReads = own(new ReadOptions());
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
