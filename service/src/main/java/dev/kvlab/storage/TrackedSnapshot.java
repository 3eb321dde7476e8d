package dev.kvlab.storage;

import org.rocksdb.ReadOptions;
import org.rocksdb.Snapshot;

/**
 * The records as they were at one moment ({@link RocksStore#trackChanges}), readable as long as it
 * is not released, with the keys changed since ({@link #changes}). Holding one keeps RocksDB from
 * dropping the versions it sees, so it is held only while something is summarized against it.
 */
public final class TrackedSnapshot {

    private final Snapshot snapshot;
    private final ChangedKeys changes;
    /** Background reads at the snapshot: they fill no block cache. */
    private final ReadOptions reads;
    private boolean released;

    TrackedSnapshot(Snapshot snapshot, ChangedKeys changes) {
        this.snapshot = snapshot;
        this.changes = changes;
        this.reads = RocksOptions.scanOptions().setSnapshot(snapshot);
    }

    /** The keys changed since the snapshot was taken, until the next one replaces it. */
    public ChangedKeys changes() {
        return changes;
    }

    Snapshot snapshot() {
        return snapshot;
    }

    ReadOptions reads() {
        return reads;
    }

    /** Marks it released; false if it already was. Called by the store under its lock. */
    boolean release() {
        if (released) {
            return false;
        }
        released = true;
        reads.close();
        return true;
    }

    boolean released() {
        return released;
    }
}
