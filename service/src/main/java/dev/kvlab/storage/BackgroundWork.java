package dev.kvlab.storage;

import java.util.Map;

/**
 * RocksDB's completed flushes and compactions since the store opened, and the bytes of the SST
 * files they wrote, from RocksDB's cumulative compaction statistics (the map property
 * {@code rocksdb.cfstats}): RocksDB books a flush as a compaction into level 0 and a compaction at
 * its output level, so level 0's figures are the flushes' and the rest the compactions' (a rare
 * intra-level-0 compaction is counted as a flush).
 *
 * <p>Not from an event listener: RocksDB calls a Java listener on its own threads, where the JNI
 * layer finds its classes with the system class loader, which in the node's Spring Boot jar does
 * not see them (the node crashed on the first completed compaction).
 */
record BackgroundWork(long flushes, long flushBytes, long compactions, long compactionBytes) {

    static final BackgroundWork NONE = new BackgroundWork(0, 0, 0, 0);
    static final String PROPERTY = "rocksdb.cfstats";
    private static final double GIB = 1L << 30;

    /** One column family's figures, from its {@code rocksdb.cfstats} map. */
    static BackgroundWork of(Map<String, String> cfstats) {
        double flushes = number(cfstats, "compaction.L0.CompCount");
        double flushGb = number(cfstats, "compaction.L0.WriteGB");
        double all = number(cfstats, "compaction.Sum.CompCount");
        double allGb = number(cfstats, "compaction.Sum.WriteGB");
        return new BackgroundWork(Math.round(flushes), Math.round(flushGb * GIB), Math.round(all - flushes),
                Math.round((allGb - flushGb) * GIB));
    }

    BackgroundWork plus(BackgroundWork other) {
        return new BackgroundWork(flushes + other.flushes, flushBytes + other.flushBytes,
                compactions + other.compactions, compactionBytes + other.compactionBytes);
    }

    /** A figure of the map; 0 where it has none (a level that never had a file). */
    private static double number(Map<String, String> cfstats, String key) {
        String value = cfstats.get(key);
        if (value == null) {
            return 0;
        }
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
