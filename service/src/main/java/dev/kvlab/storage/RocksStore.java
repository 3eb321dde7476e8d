package dev.kvlab.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The node's records in RocksDB, keys ordered as unsigned bytes (RocksDB's bytewise comparator).
 *
 * <p>Blocking: callers run it on the storage scheduler ({@link StorageExecutor}), never on an event
 * loop. Thread-safe. A write only wins over an older version: replicas may receive the writes to a
 * key in any order and must all end on the newest one.
 */
public final class RocksStore implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    /** Writes to one key are serialized by one of these, so a version check and its put are atomic. */
    private static final int WRITE_STRIPES = 1024;

    private final RocksOptions options;
    private final RocksDB db;
    private final Object[] writeStripes = new Object[WRITE_STRIPES];
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    /** Operations hold the read side; close() takes the write side, so no call runs on a closed db. */
    private final ReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private boolean closed;

    private RocksStore(RocksOptions options, RocksDB db) {
        this.options = options;
        this.db = db;
        Arrays.setAll(writeStripes, i -> new Object());
    }

    public static RocksStore open(StorageProperties properties) {
        Path dir = properties.dir().toAbsolutePath();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StorageException("cannot create the storage directory " + dir + ": " + e.getMessage(), e);
        }
        RocksOptions options = new RocksOptions(properties);
        try {
            return new RocksStore(options, RocksDB.open(options.options, dir.toString()));
        } catch (RocksDBException e) {
            options.close();
            throw new StorageException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The record under {@code key} (a value or a tombstone), or {@code null} if there is none. */
    public Record get(byte[] key) {
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            byte[] stored = db.get(options.pointReads, key);
            return stored == null ? null : Record.decode(stored);
        } catch (RocksDBException e) {
            throw new StorageException("read failed: " + e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /**
     * Stores {@code record} unless the key already holds the same or a newer version.
     *
     * @return whether the record was stored; {@code false} means a newer (or the same) write is there
     */
    public boolean write(byte[] key, Record record) {
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            synchronized (writeStripes[stripeOf(key)]) {
                Version current = storedVersion(key);
                if (current != null && !record.version().isNewerThan(current)) {
                    return false;
                }
                db.put(options.writeOptions, key, record.encoded());
                return true;
            }
        } catch (RocksDBException e) {
            throw new StorageException("write failed: " + e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** Reads only the header of the stored record: the version check needs no value copy. */
    private Version storedVersion(byte[] key) throws RocksDBException {
        byte[] header = new byte[Record.HEADER_BYTES];
        int size = db.get(options.pointReads, key, header);
        if (size == RocksDB.NOT_FOUND) {
            return null;
        }
        if (size < Record.HEADER_BYTES) {
            throw new StorageException("corrupt record of " + size + " bytes under a key");
        }
        return Record.versionOf(header);
    }

    /**
     * A cursor over {@code [start, end)}, to the last key when {@code end} is null. The caller must
     * close it; the store closes any still open when it closes.
     */
    public RangeCursor range(byte[] start, byte[] end) {
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            RangeCursor cursor = new RangeCursor(db, start, end, openCursors::remove);
            openCursors.add(cursor);
            return cursor;
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** Cursors not closed yet; a stream that ended or was cancelled leaves none behind. */
    int openCursors() {
        return openCursors.size();
    }

    /** A RocksDB property such as {@code rocksdb.estimate-num-keys}, for metrics and status. */
    public long longProperty(String name) {
        lifecycle.readLock().lock();
        try {
            ensureOpen();
            return db.getLongProperty(name);
        } catch (RocksDBException e) {
            throw new StorageException("cannot read RocksDB property " + name + ": " + e.getMessage(), e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    private static int stripeOf(byte[] key) {
        int h = Arrays.hashCode(key);
        return (h ^ (h >>> 16)) & (WRITE_STRIPES - 1);
    }

    private void ensureOpen() {
        if (closed) {
            throw new StorageException("the store is closed");
        }
    }

    /** Closes open cursors, then the database (flushing nothing: the WAL has every write), then the options. */
    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (RangeCursor cursor : openCursors) {
                cursor.close();
            }
            db.close();
            options.close();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }
}
