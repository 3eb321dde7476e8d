package dev.kvlab.storage;

import java.nio.ByteBuffer;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Records as kvlab stored them first: {@code [flags:1][timestamp:8][node:4][value...]} in the
 * default column family, put after a read of the stored version. A store opened on such a
 * directory moves them into the records column family in the current layout ({@link Record}).
 */
final class LegacyLayout {

    /** Records moved per atomic write batch. */
    private static final int RECORDS_PER_BATCH = 1_000;

    private LegacyLayout() {
    }

    /**
     * Moves every record of {@code legacy} into {@code records} and returns how many there were. A
     * crash midway loses nothing and the next open carries on: each batch merges its records into
     * the new family and deletes them from the old one atomically, and a record merged twice is
     * still the newest one once.
     */
    static long migrate(RocksDB db, ColumnFamilyHandle legacy, ColumnFamilyHandle records, WriteOptions writeOptions)
            throws RocksDBException {
        long moved = 0;
        try (RocksIterator iterator = db.newIterator(legacy); WriteBatch batch = new WriteBatch()) {
            for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                byte[] key = iterator.key();
                batch.merge(records, key, toCurrentLayout(iterator.value()));
                batch.delete(legacy, key);
                if (++moved % RECORDS_PER_BATCH == 0) {
                    db.write(writeOptions, batch);
                    batch.clear();
                }
            }
            iterator.status();
            if (batch.count() > 0) {
                db.write(writeOptions, batch);
            }
        }
        if (moved > 0) {
            // Drops the deletes, so the old family costs nothing from now on.
            db.compactRange(legacy);
        }
        return moved;
    }

    /** The same record in the current layout, written by {@link Record} from the old one's version and value. */
    static byte[] toCurrentLayout(byte[] legacy) {
        try {
            if (legacy.length < Record.HEADER_BYTES) {
                throw new IllegalArgumentException(legacy.length + " bytes, shorter than its header");
            }
            byte flags = legacy[0];
            if ((flags & ~1) != 0 || flags == 1 && legacy.length != Record.HEADER_BYTES) {
                throw new IllegalArgumentException("flags " + flags + " on " + legacy.length + " bytes");
            }
            ByteBuffer header = ByteBuffer.wrap(legacy);
            Version version = new Version(header.getLong(1), header.getInt(9));
            // The old array has the header's room in front of the value, where Record writes its own.
            return (flags == 1 ? Record.tombstone(version) : Record.value(version, legacy.clone())).encoded();
        } catch (IllegalArgumentException e) {
            throw new StorageException("a record of the first layout is corrupt: " + e.getMessage(), e);
        }
    }
}
