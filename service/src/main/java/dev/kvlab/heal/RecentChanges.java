package dev.kvlab.heal;

import dev.kvlab.storage.RecordHeader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys whose record changed in the last updates of {@link MaintainedBucketHashes}, each with
 * its header at every update since its first change kept: what lets a repair round compare only the
 * keys that changed, at the snapshot each side's bucket hashes were taken at.
 *
 * <p>Updates are numbered (generations). Every change after {@link #floor()} is kept; memory is
 * bounded by {@code maxBytes}, past which the key changed longest ago is forgotten and the floor rises
 * to its last change. Used by the one update running at a time ({@link MaintainedBucketHashes}).
 */
final class RecentChanges {

    /** What an entry costs beside its key: the map entry, the buffer, the history. */
    static final int ENTRY_BYTES = 160;
    /** What one change kept of a key costs. */
    static final int CHANGE_BYTES = 48;

    /** The header a key had before generation {@code generation}'s update (null: it had none). */
    private record Change(long generation, RecordHeader before) {
    }

    private static final class Entry {
        final List<Change> changes = new ArrayList<>(2);
        RecordHeader current;
        long lastChanged;
    }

    /** A key's header at a generation: {@code known} false when the changes kept cannot tell. */
    record At(boolean known, boolean read, RecordHeader header) {
        static final At UNKNOWN = new At(false, false, null);
        /** Unchanged since: its header is the one in the store now. */
        static final At UNCHANGED = new At(true, true, null);
    }

    private final long maxBytes;
    /** In order of each key's last change, oldest first. */
    private final LinkedHashMap<ByteBuffer, Entry> entries = new LinkedHashMap<>(16, 0.75f, false);
    private long bytes;
    private long floor;

    RecentChanges(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Nothing is known of changes up to {@code generation} (the hashes were built anew at it). */
    void reset(long generation) {
        entries.clear();
        bytes = 0;
        floor = generation;
    }

    /** {@code key} changed in {@code generation}'s update, from {@code before} to {@code after}. */
    void changed(byte[] key, RecordHeader before, RecordHeader after, long generation) {
        ByteBuffer name = ByteBuffer.wrap(key);
        Entry entry = entries.remove(name);
        if (entry == null) {
            entry = new Entry();
            bytes += key.length + ENTRY_BYTES;
        }
        entry.changes.add(new Change(generation, before));
        entry.current = after;
        entry.lastChanged = generation;
        bytes += CHANGE_BYTES;
        entries.put(name, entry);
        for (Iterator<Map.Entry<ByteBuffer, Entry>> oldest = entries.entrySet().iterator(); bytes > maxBytes && oldest.hasNext(); ) {
            Map.Entry<ByteBuffer, Entry> gone = oldest.next();
            oldest.remove();
            bytes -= gone.getKey().capacity() + ENTRY_BYTES + (long) CHANGE_BYTES * gone.getValue().changes.size();
            floor = Math.max(floor, gone.getValue().lastChanged);
        }
    }

    /** Below it, changes are not known. */
    long floor() {
        return floor;
    }

    /** The header of {@code key} at {@code generation}'s snapshot, as far as the changes kept tell. */
    At at(byte[] key, long generation) {
        if (generation < floor) {
            return At.UNKNOWN;
        }
        Entry entry = entries.get(ByteBuffer.wrap(key));
        if (entry == null) {
            return At.UNCHANGED;
        }
        for (Change change : entry.changes) {
            if (change.generation() > generation) {
                return new At(true, false, change.before());
            }
        }
        return new At(true, false, entry.current);
    }

    /** The keys kept whose last change came after update {@code since}, with their header now (null where none). */
    List<RecordHeader.Keyed> keysSince(long since) {
        List<RecordHeader.Keyed> keys = new ArrayList<>();
        for (Map.Entry<ByteBuffer, Entry> kept : entries.sequencedEntrySet().reversed()) { // newest change first
            if (kept.getValue().lastChanged <= since) {
                break;
            }
            keys.add(new RecordHeader.Keyed(kept.getKey().array(), kept.getValue().current));
        }
        return keys;
    }

    int size() {
        return entries.size();
    }
}
