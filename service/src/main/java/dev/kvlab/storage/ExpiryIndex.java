package dev.kvlab.storage;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The expiry index: the column family {@code expiry}, one entry {@code [expiresAt:8][key]} (no
 * value) per live expiring record stored, written in the same RocksDB write as the record. Ordered
 * by expiry, so the records that expired by now are its first entries, read without a scan of
 * the records ({@link RocksStore#reapExpired}).
 *
 * <p>Why an index rather than a compaction filter: RocksDB drops bytes in compaction, but a filter
 * that decides which records expired must be native code; RocksJava runs no filter written in
 * Java. So the reaper does the filter's part: it turns each expired value into a tombstone of the
 * same version ({@link Record#reaped}), and compaction then drops the value's bytes as it drops any
 * older merge operand. The tombstone leaves as a delete's does, after its grace.
 */
public final class ExpiryIndex {

    static final byte[] NO_VALUE = new byte[0];

    private ExpiryIndex() {
    }

    /** Whether the record gets an entry: a live value that expires. */
    static boolean indexed(Record record) {
        return record.expires() && !record.isTombstone();
    }

    static byte[] entry(long expiresAtMillis, byte[] key) {
        return ByteBuffer.allocate(Long.BYTES + key.length).putLong(expiresAtMillis).put(key).array();
    }

    /** The first entry past every record expiring at {@code deadlineMillis} or before. */
    static byte[] upperBound(long deadlineMillis) {
        return ByteBuffer.allocate(Long.BYTES).putLong(deadlineMillis + 1).array();
    }

    static long expiresAtOf(byte[] entry) {
        return ByteBuffer.wrap(entry).getLong(0);
    }

    static byte[] keyOf(byte[] entry) {
        return Arrays.copyOfRange(entry, Long.BYTES, entry.length);
    }

    /** One reaping step: the index entries it read and deleted, and the records among them it reaped. */
    public record Reaped(int entries, int records) {
    }
}
