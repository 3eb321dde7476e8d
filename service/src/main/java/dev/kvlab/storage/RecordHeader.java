package dev.kvlab.storage;

import java.nio.ByteBuffer;

/**
 * What a record says of itself without its value: its version, the {@code from} of its write,
 * whether it is a tombstone, and when its write expires ({@link Record#NEVER} if it does not). What
 * repair compares and ownership is reckoned from, read without copying values
 * ({@link RocksStore#headers}).
 */
public record RecordHeader(Version version, int from, boolean tombstone, long expiresAtMillis) {

    /** The header of a record that never expires. */
    public RecordHeader(Version version, int from, boolean tombstone) {
        this(version, from, tombstone, Record.NEVER);
    }

    /** The header of a record in its stored form (its first {@link Record#MAX_HEADER_BYTES} bytes, or all of a shorter one). */
    public static RecordHeader of(byte[] stored) {
        return of(stored, stored.length);
    }

    /**
     * The header of a record of {@code length} bytes whose start is in {@code stored} (which holds
     * at least the header, and may be longer than the record).
     */
    public static RecordHeader of(byte[] stored, int length) {
        if (length < Record.HEADER_BYTES || stored.length < Record.HEADER_BYTES) {
            throw new IllegalArgumentException("a record header is " + Record.HEADER_BYTES + " bytes, not " + length);
        }
        ByteBuffer buffer = ByteBuffer.wrap(stored);
        int flags = buffer.get(12) & 0xff;
        boolean expires = (flags & 0x80) != 0;
        if (expires && (length < Record.MAX_HEADER_BYTES || stored.length < Record.MAX_HEADER_BYTES)) {
            throw new IllegalArgumentException("the header of an expiring record is " + Record.MAX_HEADER_BYTES + " bytes, not " + length);
        }
        return new RecordHeader(new Version(buffer.getLong(0), buffer.getInt(8) ^ Integer.MIN_VALUE), (flags & 0x7f) >>> 1,
                (flags & 1) != 0, expires ? buffer.getLong(Record.HEADER_BYTES) : Record.NEVER);
    }

    /** Whether the write expires (reaped or not). */
    public boolean expires() {
        return expiresAtMillis != Record.NEVER;
    }

    /** Whether the record holds no value at {@code nowMillis}: a tombstone, or expired ({@link Record#isDeadAt}). */
    public boolean deadAt(long nowMillis) {
        return tombstone || expiresAtMillis <= nowMillis;
    }

    /** A key and the header of its record. */
    public record Keyed(byte[] key, RecordHeader header) {
    }
}
