package dev.kvlab.storage;

import java.util.concurrent.atomic.LongAdder;
import org.rocksdb.AbstractEventListener;
import org.rocksdb.CompactionJobInfo;
import org.rocksdb.CompactionJobStats;
import org.rocksdb.FlushJobInfo;
import org.rocksdb.RocksDB;
import org.rocksdb.Status;
import org.rocksdb.TableProperties;

/**
 * RocksDB's completed flushes and compactions, and the bytes they wrote, counted as RocksDB reports
 * them (for metrics: a flush or compaction is a cause of slow requests worth seeing on a time axis).
 *
 * <p>RocksDB calls it on its own flush and compaction threads, which wait for it: it only adds to
 * counters, never locks, logs or allocates beyond what RocksDB hands over.
 */
final class BackgroundWork extends AbstractEventListener {

    private final LongAdder flushes = new LongAdder();
    private final LongAdder flushBytes = new LongAdder();
    private final LongAdder compactions = new LongAdder();
    private final LongAdder compactionBytes = new LongAdder();

    BackgroundWork() {
        // Only these two cross from RocksDB into Java; every other event stays native.
        super(EnabledEventCallback.ON_FLUSH_COMPLETED, EnabledEventCallback.ON_COMPACTION_COMPLETED);
    }

    /** Called only for a flush that succeeded; its bytes are the new SST file's blocks. */
    @Override
    public void onFlushCompleted(RocksDB db, FlushJobInfo info) {
        flushes.increment();
        TableProperties table = info.getTableProperties();
        if (table != null) {
            flushBytes.add(table.getDataSize() + table.getIndexSize() + table.getFilterSize());
        }
    }

    /** Called for every compaction that ended; one that failed (at shutdown, say) is not counted. */
    @Override
    public void onCompactionCompleted(RocksDB db, CompactionJobInfo info) {
        Status status = info.status();
        if (status != null && status.getCode() != Status.Code.Ok) {
            return;
        }
        compactions.increment();
        try (CompactionJobStats stats = info.stats()) { // a copy RocksDB made for Java: freed here
            if (stats != null) {
                compactionBytes.add(stats.totalOutputBytes());
            }
        }
    }

    long flushes() {
        return flushes.sum();
    }

    long flushBytes() {
        return flushBytes.sum();
    }

    long compactions() {
        return compactions.sum();
    }

    long compactionBytes() {
        return compactionBytes.sum();
    }
}
