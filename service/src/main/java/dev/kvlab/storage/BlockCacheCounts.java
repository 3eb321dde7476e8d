package dev.kvlab.storage;

import org.rocksdb.Statistics;
import org.rocksdb.TickerType;

/**
 * How often RocksDB found the block it needed in its block cache (hits) and how often it read it
 * from a file (misses), since the store opened, by kind of block.
 */
public record BlockCacheCounts(long dataHits, long dataMisses, long indexHits, long indexMisses,
                               long filterHits, long filterMisses) {

    static final BlockCacheCounts NONE = new BlockCacheCounts(0, 0, 0, 0, 0, 0);

    static BlockCacheCounts of(Statistics statistics) {
        return new BlockCacheCounts(
                statistics.getTickerCount(TickerType.BLOCK_CACHE_DATA_HIT),
                statistics.getTickerCount(TickerType.BLOCK_CACHE_DATA_MISS),
                statistics.getTickerCount(TickerType.BLOCK_CACHE_INDEX_HIT),
                statistics.getTickerCount(TickerType.BLOCK_CACHE_INDEX_MISS),
                statistics.getTickerCount(TickerType.BLOCK_CACHE_FILTER_HIT),
                statistics.getTickerCount(TickerType.BLOCK_CACHE_FILTER_MISS));
    }
}
