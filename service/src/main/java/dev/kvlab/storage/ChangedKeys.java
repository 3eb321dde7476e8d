package dev.kvlab.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The keys whose record changed in the store since a snapshot was taken ({@link RocksStore#trackChanges}),
 * by any path: writes, deletes, reaping. Bounded: past {@code maxBytes} it stops keeping keys and
 * only says it {@link #overflowed}, and whoever reads it has to scan the store instead.
 */
public final class ChangedKeys {

    /** What a key kept costs beside its bytes: the set's entry, the buffer and the array headers. */
    static final int OVERHEAD_BYTES = 96;

    private final Set<ByteBuffer> keys = ConcurrentHashMap.newKeySet();
    private final long maxBytes;
    private final AtomicLong bytes = new AtomicLong();
    private volatile boolean overflowed;

    ChangedKeys(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Called with the store's lock held (read or write side), before the change is written. */
    void add(byte[] key) {
        // A key changed again is kept once and counted once: a few hot keys written all the time
        // must not fill the bound and make the next update scan the store.
        if (overflowed || keys.contains(ByteBuffer.wrap(key)) || !keys.add(ByteBuffer.wrap(key.clone()))) {
            return;
        }
        if (bytes.addAndGet(key.length + OVERHEAD_BYTES) > maxBytes) {
            overflowed = true;
            keys.clear();
        }
    }

    /** Whether more keys changed than the bound keeps: the set no longer says which. */
    public boolean overflowed() {
        return overflowed;
    }

    /** The keys kept. */
    public int size() {
        return keys.size();
    }

    /** Whether no key changed (and none was dropped). */
    public boolean isEmpty() {
        return !overflowed && keys.isEmpty();
    }

    /** The keys, in no order; meaningful once no more change comes ({@link RocksStore#trackChanges} replaced it). */
    public List<byte[]> keys() {
        List<byte[]> list = new ArrayList<>(keys.size());
        for (ByteBuffer key : keys) {
            list.add(key.array());
        }
        return list;
    }
}
