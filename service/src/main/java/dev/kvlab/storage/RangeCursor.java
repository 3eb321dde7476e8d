package dev.kvlab.storage;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * A forward scan over {@code [start, end)} that cannot leak or crash: every step and
 * {@link #close()} are serialized, so a stream cancelled from another thread closes the native
 * iterator only between two steps, and a closed cursor just reports the end.
 *
 * <p>It reads one entry ahead, so a stream over it completes as soon as the last entry has been
 * taken, without waiting for demand it does not need.
 */
public final class RangeCursor implements Iterator<Entry>, AutoCloseable {

    private final ReadOptions readOptions;
    private final Slice upperBound;
    private final RocksIterator iterator;
    private final Consumer<RangeCursor> onClose;
    private Entry lookahead;
    private boolean closed;

    RangeCursor(RocksDB db, ColumnFamilyHandle records, byte[] start, byte[] end, Consumer<RangeCursor> onClose) {
        this.onClose = onClose;
        this.readOptions = RocksOptions.scanOptions();
        this.upperBound = end == null ? null : new Slice(end);
        if (upperBound != null) {
            // RocksDB stops at the bound itself, without reading keys past it.
            readOptions.setIterateUpperBound(upperBound);
        }
        this.iterator = db.newIterator(records, readOptions);
        iterator.seek(start);
    }

    @Override
    public synchronized boolean hasNext() {
        if (lookahead == null && !closed) {
            lookahead = read();
        }
        return lookahead != null;
    }

    @Override
    public synchronized Entry next() {
        if (!hasNext()) {
            throw new NoSuchElementException("the range has no more entries");
        }
        Entry entry = lookahead;
        lookahead = null;
        return entry;
    }

    private Entry read() {
        if (!iterator.isValid()) {
            checkStatus();
            return null;
        }
        byte[] key = iterator.key();
        Entry entry = new Entry(key, decode(key, iterator.value()));
        iterator.next();
        return entry;
    }

    private void checkStatus() {
        try {
            iterator.status();
        } catch (RocksDBException e) {
            throw new StorageException("range scan failed: " + e.getMessage(), e);
        }
    }

    private static Record decode(byte[] key, byte[] value) {
        try {
            return Record.decode(value);
        } catch (IllegalArgumentException e) {
            throw new StorageException("corrupt record under key " + Arrays.toString(key) + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        lookahead = null;
        iterator.close();
        readOptions.close();
        if (upperBound != null) {
            upperBound.close();
        }
        onClose.accept(this);
    }
}
