package dev.kvlab.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.WriteBatch;

/**
 * A column family of the node's own beside its records: hints for peers that missed writes, and
 * what the node remembers about its cluster. Plain puts, deletes and bounded scans in key order.
 * Blocking, like {@link RocksStore}: callers run it on the storage scheduler.
 */
public final class SideTable {

    private final RocksStore store;
    private final ColumnFamilyHandle family;

    SideTable(RocksStore store, ColumnFamilyHandle family) {
        this.store = store;
        this.family = family;
    }

    public byte[] get(byte[] key) {
        return store.call("read failed", db -> db.get(family, key));
    }

    /** Stores every entry in one write. */
    public void putAll(List<Map.Entry<byte[], byte[]>> entries) {
        store.call("write failed", db -> {
            try (WriteBatch batch = new WriteBatch()) {
                for (Map.Entry<byte[], byte[]> entry : entries) {
                    batch.put(family, entry.getKey(), entry.getValue());
                }
                db.write(store.writeOptions(), batch);
            }
            return null;
        });
    }

    public void put(byte[] key, byte[] value) {
        putAll(List.of(Map.entry(key, value)));
    }

    public void deleteAll(List<byte[]> keys) {
        store.call("delete failed", db -> {
            try (WriteBatch batch = new WriteBatch()) {
                for (byte[] key : keys) {
                    batch.delete(family, key);
                }
                db.write(store.writeOptions(), batch);
            }
            return null;
        });
    }

    /** Up to {@code limit} entries of {@code [start, end)} in key order, {@code end} null for no end. */
    public List<Map.Entry<byte[], byte[]>> scan(byte[] start, byte[] end, int limit) {
        return store.call("scan failed", db -> {
            List<Map.Entry<byte[], byte[]>> entries = new ArrayList<>();
            try (Slice bound = end == null ? null : new Slice(end);
                 ReadOptions options = new ReadOptions().setFillCache(false)) {
                if (bound != null) {
                    options.setIterateUpperBound(bound);
                }
                try (RocksIterator iterator = db.newIterator(family, options)) {
                    for (iterator.seek(start); iterator.isValid() && entries.size() < limit; iterator.next()) {
                        entries.add(Map.entry(iterator.key(), iterator.value()));
                    }
                    iterator.status();
                }
            }
            return entries;
        });
    }
}
