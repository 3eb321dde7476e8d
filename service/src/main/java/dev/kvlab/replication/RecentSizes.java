package dev.kvlab.replication;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The size of the record each recently read key had, in a fixed table of slots by the key's hash
 * (a key's 32-bit fingerprint and size in one slot; another key of the same slot takes it over).
 * A coordinator refuses a read at once when its budget has no room for the answers the key's last
 * record would take, without reading anything: a refused read of a 1 MiB value otherwise costs a
 * 1 MiB copy out of RocksDB, which under a burst is most of the work and of the garbage. A hint
 * only ever refuses early: a read it lets through is admitted or refused by the budget as ever.
 */
final class RecentSizes {

    private static final int SLOTS = 4096;
    private final AtomicLongArray slots = new AtomicLongArray(SLOTS);

    /** The size of the key's last record seen; 0 when none is known (or it was absent). */
    long of(byte[] key) {
        int hash = Arrays.hashCode(key);
        long slot = slots.get(hash & (SLOTS - 1));
        return (int) (slot >>> 32) == hash ? slot & 0xFFFF_FFFFL : 0;
    }

    /** The key's record was {@code bytes} long (0: absent). */
    void saw(byte[] key, long bytes) {
        int hash = Arrays.hashCode(key);
        slots.set(hash & (SLOTS - 1), ((long) hash << 32) | (bytes & 0xFFFF_FFFFL));
    }
}
