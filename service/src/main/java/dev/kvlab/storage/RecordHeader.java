package dev.kvlab.storage;

import java.nio.ByteBuffer;

/**
 * What a record says of itself without its value: its version, the {@code from} of its write and
 * whether it is a tombstone. What repair compares and ownership is reckoned from, read without
 * copying values ({@link RocksStore#headers}).
 */
public record RecordHeader(Version version, int from, boolean tombstone) {

    /** The header of a record in its stored form (the first {@link Record#HEADER_BYTES} bytes). */
    public static RecordHeader of(byte[] stored) {
        if (stored.length < Record.HEADER_BYTES) {
            throw new IllegalArgumentException("a record header is " + Record.HEADER_BYTES + " bytes, not " + stored.length);
        }
        ByteBuffer buffer = ByteBuffer.wrap(stored);
        int flags = buffer.get(12) & 0xff;
        return new RecordHeader(new Version(buffer.getLong(0), buffer.getInt(8) ^ Integer.MIN_VALUE), flags >>> 1, (flags & 1) != 0);
    }

    /** A key and the header of its record. */
    public record Keyed(byte[] key, RecordHeader header) {
    }
}
