package dev.kvlab.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.Holder;
import org.rocksdb.RocksDB;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's records in RocksDB, in the column family {@code records}, keys ordered as unsigned
 * bytes (RocksDB's bytewise comparator).
 *
 * <p>Blocking, but for {@link #readFromMemory}: callers run it on the storage scheduler
 * ({@link StorageExecutor}), never on an event loop. Thread-safe. A write only wins over an older version: replicas may receive the writes to a
 * key in any order and must all end on the newest one.
 */
public final class RocksStore implements AutoCloseable {

    static {
        RocksDB.loadLibrary();
    }

    private static final Logger log = LoggerFactory.getLogger(RocksStore.class);
    static final byte[] RECORDS = "records".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HINTS = "hints".getBytes(StandardCharsets.UTF_8);
    private static final byte[] META = "meta".getBytes(StandardCharsets.UTF_8);
    private static final byte[] EXPIRY = "expiry".getBytes(StandardCharsets.UTF_8);

    private final RocksOptions options;
    private final Path dir;
    private final RocksDB db;
    /** Empty, unless a store of the first layout left records there ({@link LegacyLayout}). */
    private final ColumnFamilyHandle legacy;
    private final ColumnFamilyHandle records;
    private final ColumnFamilyHandle hintsFamily;
    private final ColumnFamilyHandle metaFamily;
    /** When each expiring record stored expires: see {@link ExpiryIndex}. */
    private final ColumnFamilyHandle expiryFamily;
    private final SideTable hints;
    private final SideTable meta;
    private final Set<RangeCursor> openCursors = ConcurrentHashMap.newKeySet();
    /** Snapshots not released yet ({@link #trackChanges}); the store releases any left when it closes. */
    private final Set<TrackedSnapshot> openSnapshots = ConcurrentHashMap.newKeySet();
    /**
     * Told every key whose record changes, while something tracks changes: set and read under
     * {@link #lifecycle}, so a change is in the set of the snapshot it is not in.
     */
    private volatile ChangedKeys changes;
    private final StorageHealth health = new StorageHealth();
    /** Operations hold the read side; close() takes the write side, so no call runs on a closed db. */
    private final ReadWriteLock lifecycle = new ReentrantReadWriteLock();
    private boolean closed;

    private RocksStore(RocksOptions options, Path dir, RocksDB db, List<ColumnFamilyHandle> families) {
        this.options = options;
        this.dir = dir;
        this.db = db;
        this.legacy = families.get(0);
        this.records = families.get(1);
        this.hintsFamily = families.get(2);
        this.metaFamily = families.get(3);
        this.expiryFamily = families.get(4);
        this.hints = new SideTable(this, hintsFamily);
        this.meta = new SideTable(this, metaFamily);
    }

    public static RocksStore open(StorageProperties properties) {
        Path dir = properties.dir().toAbsolutePath();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new StorageException("cannot create the storage directory " + dir + ": " + e.getMessage(), e);
        }
        RocksOptions options = new RocksOptions(properties);
        List<ColumnFamilyDescriptor> families = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, options.columnFamily),
                new ColumnFamilyDescriptor(RECORDS, options.columnFamily),
                new ColumnFamilyDescriptor(HINTS, options.sideFamily),
                new ColumnFamilyDescriptor(META, options.sideFamily),
                new ColumnFamilyDescriptor(EXPIRY, options.sideFamily));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        RocksStore store;
        try {
            RocksDB db = RocksDB.open(options.database, dir.toString(), families, handles);
            store = new RocksStore(options, dir, db, handles);
        } catch (RocksDBException e) {
            options.close();
            throw new StorageException("cannot open RocksDB in " + dir + ": " + e.getMessage(), e);
        }
        try {
            long moved = LegacyLayout.migrate(store.db, store.legacy, store.records, options.writeOptions);
            if (moved > 0) {
                log.info("Moved {} records of kvlab's first storage layout in {} to the current one", moved, dir);
            }
            return store;
        } catch (RocksDBException | StorageException e) {
            store.close();
            throw new StorageException("cannot move the records of kvlab's first storage layout in " + dir + ": "
                    + e.getMessage(), e);
        }
    }

    /** The directory of the store's files. */
    public Path dir() {
        return dir;
    }

    /**
     * A consistent copy of the whole store in {@code target}, which must not exist yet and must be on
     * the store's file system (inside {@link #dir} is): RocksDB flushes the memtables (writes go on
     * into new ones meanwhile, so they wait no longer than a flush) and hard-links the table files,
     * which never change, copying only the small ones. Every write stored before the call is in it.
     * Blocking, and thread-safe beside reads and writes: on a thread of the backup's, not a storage thread.
     */
    public void checkpoint(Path target) {
        whileOpen("checkpoint failed", () -> {
            try (Checkpoint checkpoint = Checkpoint.create(db)) {
                checkpoint.createCheckpoint(target.toString());
            }
            return null;
        });
    }

    /**
     * The records of a checkpoint ({@link #checkpoint}), read from it opened read-only, apart from
     * any open store: how many, how many tombstones, and the range of their versions. Reads every
     * record's header, without filling a block cache; blocking, for a thread of its own, which
     * {@code paced} is told of each record's bytes read (and may hold back).
     */
    public static CheckpointSummary summarize(Path checkpoint, LongConsumer paced) {
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (ColumnFamilyOptions family = new ColumnFamilyOptions().setMergeOperatorName("max");
             DBOptions database = new DBOptions();
             ReadOptions scan = RocksOptions.scanOptions()) {
            List<ColumnFamilyDescriptor> families = List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, family),
                    new ColumnFamilyDescriptor(RECORDS, family));
            RocksDB db = RocksDB.openReadOnly(database, checkpoint.toString(), families, handles);
            try (RocksIterator iterator = db.newIterator(handles.get(1), scan)) {
                CheckpointSummary.Counter counter = new CheckpointSummary.Counter();
                byte[] header = new byte[Record.MAX_HEADER_BYTES];
                for (iterator.seekToFirst(); iterator.isValid(); iterator.next()) {
                    int length = iterator.value(header);
                    counter.add(headerOf(header, length, iterator));
                    paced.accept(length);
                }
                iterator.status();
                return counter.summary();
            } finally {
                // The handles before the database, as RocksDB requires.
                handles.forEach(ColumnFamilyHandle::close);
                db.close();
            }
        } catch (RocksDBException e) {
            throw new StorageException("cannot read the checkpoint " + checkpoint + ": " + e.getMessage(), e);
        }
    }

    /** The record under {@code key} (a value or a tombstone), or {@code null} if there is none. */
    public Record get(byte[] key) {
        return whileOpen("read failed", () -> {
            byte[] stored = db.get(records, options.pointReads, key);
            return stored == null ? null : Record.decode(stored);
        });
    }

    /**
     * The records under {@code keys}, in their order, read together with one MultiGet in the records
     * column family; {@code null} where MultiGet has no value, which {@link #get} must then settle:
     * RocksDB's Java binding answers {@code null} alike for a key that has no record, for one it
     * could not read (an I/O error, which {@code get} throws), and for one left out because the
     * values before it passed the batch's byte limit ({@link StorageProperties.ReadBatch#maxBytes}).
     */
    public Record[] getAll(List<byte[]> keys) {
        return whileOpen("read failed", () -> {
            List<byte[]> stored = db.multiGetAsList(options.batchReads, Collections.nCopies(keys.size(), records), keys);
            Record[] found = new Record[keys.size()];
            for (int i = 0; i < found.length; i++) {
                byte[] bytes = stored.get(i);
                found[i] = bytes == null ? null : Record.decode(bytes);
            }
            return found;
        });
    }

    /**
     * The record under {@code key} if RocksDB can tell without reading a file, from its memtables
     * and block cache: a {@link MemoryRead} that is answered, with the record or {@code null} when
     * there is none; or {@link MemoryRead#MISS} when a file would have to be read, or when the store
     * is closing. Never blocks: callers may run it on an event loop.
     */
    public MemoryRead readFromMemory(byte[] key) {
        if (!lifecycle.readLock().tryLock()) {
            return MemoryRead.MISS; // close() has the store: the blocking read will say so
        }
        try {
            if (closed) {
                return MemoryRead.MISS;
            }
            // keyMayExist reads at the block-cache tier: false only when the memtables, the cached
            // filters or the cached blocks show that the key is absent; true with the value when
            // they hold all of it. True without a value, or with an empty one, when a file would
            // have to be read: RocksDB leaves the value empty when the index block it needs is not
            // cached. A stored record is never empty (it has a header), so empty means "not known".
            // (A get at this tier would say the same with an exception per miss, which costs more
            // than the read when the data has outgrown the cache.)
            Holder<byte[]> found = new Holder<>();
            if (!db.keyMayExist(records, options.memoryReads, key, found)) {
                return MemoryRead.ABSENT;
            }
            byte[] stored = found.getValue();
            return stored == null || stored.length == 0 ? MemoryRead.MISS : new MemoryRead(true, Record.decode(stored));
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /**
     * Stores {@code record} unless the key already holds a newer version; a record of the version
     * already stored is the same write and changes nothing. The write is a merge, applied when the
     * key is read or compacted, so it costs no read and needs no lock.
     */
    public void write(byte[] key, Record record) {
        writing(() -> {
            changed(key);
            if (ExpiryIndex.indexed(record)) {
                try (WriteBatch batch = new WriteBatch()) {
                    add(batch, key, record);
                    db.write(options.writeOptions, batch);
                }
            } else {
                db.merge(records, options.writeOptions, key, record.encoded());
            }
            return null;
        });
    }

    /** The record's merge, and for a live expiring one its entry in the expiry index, in the same batch. */
    private void add(WriteBatch batch, byte[] key, Record record) throws RocksDBException {
        batch.merge(records, key, record.encoded());
        if (ExpiryIndex.indexed(record)) {
            batch.put(expiryFamily, ExpiryIndex.entry(record.expiresAtMillis(), key), ExpiryIndex.NO_VALUE);
        }
    }

    /**
     * Stores every record as {@link #write} does, in one RocksDB write: one WAL append (and one
     * fsync, when writes are synced) for the lot.
     */
    public void writeAll(List<StoreOp.Write> writes) {
        if (writes.size() == 1) {
            write(writes.getFirst().key(), writes.getFirst().record());
            return;
        }
        writing(() -> {
            try (WriteBatch batch = new WriteBatch()) {
                for (StoreOp.Write write : writes) {
                    changed(write.key());
                    add(batch, write.key(), write.record());
                }
                db.write(options.writeOptions, batch);
            }
            return null;
        });
    }

    /**
     * Whether the store takes writes now: an empty write, which RocksDB refuses as long as a
     * background error (a full disk) stops writes, and lets through once it has resumed.
     */
    public void probeWrites() {
        writing(() -> {
            try (WriteBatch empty = new WriteBatch()) {
                db.write(options.writeOptions, empty);
            }
            return null;
        });
    }

    public StorageHealth health() {
        return health;
    }

    /** A write: its failure (a full disk above all) and its success tell {@link #health}. */
    private void writing(DatabaseCall<Void> write) {
        try {
            whileOpen("write failed", write);
            health.writeSucceeded();
        } catch (StoreClosedException e) {
            throw e;
        } catch (StorageException e) {
            health.writeFailed(e);
            throw e;
        }
    }

    /**
     * A cursor over {@code [start, end)}, to the last key when {@code end} is null. The caller must
     * close it; the store closes any still open when it closes.
     */
    public RangeCursor range(byte[] start, byte[] end) {
        return whileOpen("range failed", () -> {
            RangeCursor cursor = new RangeCursor(db, records, start, end, openCursors::remove);
            openCursors.add(cursor);
            return cursor;
        });
    }

    /**
     * Up to {@code limit} keys from {@code start} on, in key order, each with its record's header:
     * for scans of the whole store in steps (repair, handoff), without copying values or filling
     * the block cache.
     */
    public List<RecordHeader.Keyed> headers(byte[] start, int limit) {
        return whileOpen("scan failed", () -> {
            List<RecordHeader.Keyed> found = new ArrayList<>(Math.min(limit, 1024));
            byte[] header = new byte[Record.MAX_HEADER_BYTES];
            try (ReadOptions scan = RocksOptions.scanOptions(); RocksIterator iterator = db.newIterator(records, scan)) {
                for (iterator.seek(start); iterator.isValid() && found.size() < limit; iterator.next()) {
                    found.add(new RecordHeader.Keyed(iterator.key(), headerOf(header, iterator.value(header), iterator)));
                }
                iterator.status();
            }
            return found;
        });
    }

    /** The header of the record the iterator is on, its first bytes read into {@code header}; {@code length} is the record's. */
    private static RecordHeader headerOf(byte[] header, int length, RocksIterator iterator) {
        try {
            return RecordHeader.of(header, length);
        } catch (IllegalArgumentException e) {
            throw new StorageException("a record shorter than its header under key " + Arrays.toString(iterator.key()) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reaps up to {@code limit} expiring records that expired by {@code deadlineMillis}, in
     * one write: each key whose record is still a live value expiring when its index entry says
     * gets a {@link Record#reaped} tombstone of the same version, merged, so the next compaction of
     * the key drops the value's bytes; the index entries read are deleted, also those of keys
     * written again since (their new record has an entry of its own). Takes the store for itself
     * while it checks and writes, as {@link #deleteIfUnchanged} does, so no write of a key comes
     * between its check and its index entry's deletion; callers keep {@code limit} small.
     *
     * @return the index entries read and the records reaped
     */
    public ExpiryIndex.Reaped reapExpired(long deadlineMillis, int limit) {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                throw new StoreClosedException();
            }
            int read = 0;
            int reaped = 0;
            try (Slice upperBound = new Slice(ExpiryIndex.upperBound(deadlineMillis));
                 ReadOptions bounded = new ReadOptions().setIterateUpperBound(upperBound);
                 RocksIterator iterator = db.newIterator(expiryFamily, bounded);
                 WriteBatch batch = new WriteBatch()) {
                for (iterator.seekToFirst(); iterator.isValid() && read < limit; iterator.next()) {
                    byte[] entry = iterator.key();
                    read++;
                    batch.delete(expiryFamily, entry);
                    byte[] key = ExpiryIndex.keyOf(entry);
                    byte[] stored = db.get(records, options.pointReads, key);
                    Record record = stored == null ? null : Record.decode(stored);
                    if (record != null && !record.isTombstone() && record.expiresAtMillis() == ExpiryIndex.expiresAtOf(entry)) {
                        changed(key);
                        batch.merge(records, key, Record.reaped(record).encoded());
                        reaped++;
                    }
                }
                iterator.status();
                if (read > 0) {
                    db.write(options.writeOptions, batch);
                }
            }
            return new ExpiryIndex.Reaped(read, reaped);
        } catch (RocksDBException e) {
            throw failure("reaping expired records failed", e);
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    /**
     * Deletes each record that is still the one given, in one write: a record of its key written
     * meanwhile stays. Takes the store for itself while it checks and deletes (writes are merges
     * that take no lock), so callers keep the lists short.
     */
    public int deleteIfUnchanged(List<Entry> expected) {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                throw new StoreClosedException();
            }
            int deleted = 0;
            try (WriteBatch batch = new WriteBatch()) {
                for (Entry entry : expected) {
                    byte[] stored = db.get(records, options.pointReads, entry.key());
                    if (stored != null && Arrays.equals(stored, entry.record().encoded())) {
                        changed(entry.key());
                        batch.delete(records, entry.key());
                        deleted++;
                    }
                }
                db.write(options.writeOptions, batch);
            }
            return deleted;
        } catch (RocksDBException e) {
            throw failure("delete failed", e);
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    /** Notes a change of {@code key}'s record, before it is written, with {@link #lifecycle} held. */
    private void changed(byte[] key) {
        ChangedKeys tracking = changes;
        if (tracking != null) {
            tracking.add(key);
        }
    }

    /**
     * A snapshot of the records, and from that moment on the keys of every record that changes
     * (written, deleted, reaped), up to {@code maxBytes} of keys: taken while no change is under
     * way, so each change is either seen by the snapshot or in its set. The set it replaces stops
     * growing. When {@code current} is the snapshot taken last and nothing changed since, it is
     * {@code current} again, and no new one is taken. Release each with {@link #release}.
     */
    public TrackedSnapshot trackChanges(long maxBytes, TrackedSnapshot current) {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                throw new StoreClosedException();
            }
            if (current != null && current.changes() == changes && !current.released() && current.changes().isEmpty()) {
                return current;
            }
            ChangedKeys next = new ChangedKeys(maxBytes);
            TrackedSnapshot tracked = new TrackedSnapshot(db.getSnapshot(), next);
            openSnapshots.add(tracked);
            changes = next;
            return tracked;
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    /** No more keys of changes are kept ({@link #trackChanges} starts again). */
    public void stopTracking() {
        changes = null;
    }

    /** Lets RocksDB drop what only {@code snapshot} still saw; nothing if it already was released or the store closed. */
    public void release(TrackedSnapshot snapshot) {
        lifecycle.readLock().lock();
        try {
            synchronized (snapshot) {
                if (!closed && snapshot.release()) {
                    db.releaseSnapshot(snapshot.snapshot());
                    openSnapshots.remove(snapshot);
                }
            }
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** {@link #headers(byte[], int)} as they were at {@code at}. */
    public List<RecordHeader.Keyed> headers(byte[] start, int limit, TrackedSnapshot at) {
        return whileOpen("scan failed", () -> {
            synchronized (at) {
                readable(at);
                List<RecordHeader.Keyed> found = new ArrayList<>(Math.min(limit, 1024));
                byte[] header = new byte[Record.MAX_HEADER_BYTES];
                try (RocksIterator iterator = db.newIterator(records, at.reads())) {
                    for (iterator.seek(start); iterator.isValid() && found.size() < limit; iterator.next()) {
                        found.add(new RecordHeader.Keyed(iterator.key(), headerOf(header, iterator.value(header), iterator)));
                    }
                    iterator.status();
                }
                return found;
            }
        });
    }

    /**
     * The header of each key's record as it was at {@code at}, null for a key that had none: point
     * reads that copy no value.
     */
    public RecordHeader[] headersOf(List<byte[]> keys, TrackedSnapshot at) {
        return whileOpen("read failed", () -> {
            synchronized (at) {
                readable(at);
                RecordHeader[] found = new RecordHeader[keys.size()];
                byte[] header = new byte[Record.MAX_HEADER_BYTES];
                for (int i = 0; i < found.length; i++) {
                    int length = db.get(records, at.reads(), keys.get(i), header);
                    if (length != RocksDB.NOT_FOUND) {
                        try {
                            found[i] = RecordHeader.of(header, length);
                        } catch (IllegalArgumentException e) {
                            throw new StorageException("a record shorter than its header under key " + Arrays.toString(keys.get(i))
                                    + ": " + e.getMessage(), e);
                        }
                    }
                }
                return found;
            }
        });
    }

    private static void readable(TrackedSnapshot at) {
        if (at.released()) {
            throw new StorageException("the snapshot was released");
        }
    }

    /** Snapshots not released yet, for tests. */
    int openSnapshots() {
        return openSnapshots.size();
    }

    /** Hints of writes that peers missed ({@code hints} column family). */
    public SideTable hints() {
        return hints;
    }

    /** What the node remembers about its cluster across restarts ({@code meta} column family). */
    public SideTable meta() {
        return meta;
    }

    /** A call on the open database for a {@link SideTable}, as {@link #whileOpen} runs it. */
    <T> T call(String failure, DatabaseFunction<T> call) {
        return whileOpen(failure, () -> call.apply(db));
    }

    WriteOptions writeOptions() {
        return options.writeOptions;
    }

    /** A call that takes the open database. */
    @FunctionalInterface
    interface DatabaseFunction<T> {
        T apply(RocksDB db) throws RocksDBException;
    }

    /** Cursors not closed yet; a stream that ended or was cancelled leaves none behind. */
    int openCursors() {
        return openCursors.size();
    }

    /** A RocksDB property such as {@code rocksdb.estimate-num-keys}, for metrics and status. */
    public long longProperty(String name) {
        return whileOpen("cannot read RocksDB property " + name, () -> db.getLongProperty(records, name));
    }

    /** The flushes and compactions RocksDB completed since the store opened, in every column family. */
    /** How often the block cache had the {@code block} asked for, and how often not; zeros once closed. */
    public BlockCacheCounts blockCacheCounts() {
        return whileOpen("cannot read RocksDB's statistics", () -> BlockCacheCounts.of(options.statistics));
    }

    public BackgroundWork backgroundWork() {
        return whileOpen("cannot read RocksDB's compaction statistics", () -> {
            BackgroundWork sum = BackgroundWork.NONE;
            for (ColumnFamilyHandle family : List.of(legacy, records, hintsFamily, metaFamily, expiryFamily)) {
                sum = sum.plus(BackgroundWork.of(db.getMapProperty(family, BackgroundWork.PROPERTY)));
            }
            return sum;
        });
    }

    /** Writes the memtables out to SST files (for tests and maintenance). */
    void flush() {
        whileOpen("flush failed", () -> {
            try (FlushOptions wait = new FlushOptions().setWaitForFlush(true)) {
                db.flush(wait, records);
            }
            return null;
        });
    }

    /** Compacts every record into the last level, where merges become plain values (for tests and maintenance). */
    void compact() {
        whileOpen("compaction failed", () -> {
            db.compactRange(records);
            return null;
        });
    }

    /** A call on the open database. */
    @FunctionalInterface
    private interface DatabaseCall<T> {
        T call() throws RocksDBException;
    }

    /**
     * Runs {@code call} holding the store open (close() waits for it), or fails if the store is
     * closed; a RocksDB error becomes a {@link StorageException} that starts with {@code failure}.
     */
    private <T> T whileOpen(String failure, DatabaseCall<T> call) {
        lifecycle.readLock().lock();
        try {
            if (closed) {
                throw new StoreClosedException();
            }
            return call.call();
        } catch (RocksDBException e) {
            throw failure(failure, e);
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** A RocksDB error as the node's exception: a full disk says so. */
    private static StorageException failure(String what, RocksDBException e) {
        if (e.getStatus() != null && e.getStatus().getSubCode() == Status.SubCode.NoSpace) {
            return new StorageFullException("the node's disk is full (" + e.getMessage()
                    + "): it stores no writes until space returns; reads go on", e);
        }
        return new StorageException(what + ": " + e.getMessage(), e);
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
            // Snapshots before the database, as RocksDB requires.
            for (TrackedSnapshot snapshot : openSnapshots) {
                synchronized (snapshot) {
                    if (snapshot.release()) {
                        db.releaseSnapshot(snapshot.snapshot());
                    }
                }
            }
            openSnapshots.clear();
            changes = null;
            legacy.close();
            records.close();
            hintsFamily.close();
            metaFamily.close();
            expiryFamily.close();
            db.close();
            options.close();
        } finally {
            lifecycle.writeLock().unlock();
        }
    }
}
