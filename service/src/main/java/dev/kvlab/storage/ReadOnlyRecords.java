package dev.kvlab.storage;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The records of a kvlab RocksDB directory that no node runs on, opened read-only with the
 * store's own options: a restore reads another node's snapshot through it and merges its records
 * into the store it restores ({@link RocksStore#writeAll}). Nothing in the directory is changed.
 * Blocking; one thread at a time.
 */
public final class ReadOnlyRecords implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    private final RocksOptions options;
    private final RocksDB db;
    private final List<ColumnFamilyHandle> handles;

    private ReadOnlyRecords(RocksOptions options, RocksDB db, List<ColumnFamilyHandle> handles) {
        this.options = options;
        this.db = db;
        this.handles = handles;
    }

    /**
     * Opens the records of {@code dir} ({@code properties} give the cache sizes; their directory is
     * not used). Only the records' column family is read: the hints and what the node remembered
     * of its cluster belong to the node that wrote them.
     */
    public static ReadOnlyRecords open(Path dir, StorageProperties properties) {
        if (!Files.isDirectory(dir)) {
            throw new StorageException("no RocksDB directory at " + dir);
        }
        RocksOptions options = new RocksOptions(properties);
        // Read-only, RocksDB opens the column families it is given and leaves the others alone.
        List<ColumnFamilyDescriptor> families = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, options.columnFamily),
                new ColumnFamilyDescriptor(RocksStore.RECORDS, options.columnFamily));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try {
            RocksDB db = RocksDB.openReadOnly(options.database, dir.toString(), families, handles);
            return new ReadOnlyRecords(options, db, handles);
        } catch (RocksDBException e) {
            options.close();
            throw new StorageException("cannot open the RocksDB files in " + dir + " read-only: " + e.getMessage(), e);
        }
    }

    /** Every record, in key order; the caller closes the cursor before this. */
    public RangeCursor all() {
        return new RangeCursor(db, handles.get(1), new byte[0], null, cursor -> {
        });
    }

    @Override
    public void close() {
        for (ColumnFamilyHandle handle : handles) {
            handle.close();
        }
        db.close();
        options.close();
    }
}
