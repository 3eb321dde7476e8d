package dev.kvlab.storage;

import java.nio.ByteBuffer;

/**
 * What RocksDB stores under a key: a version, a tombstone flag and the value, encoded as
 * {@code [flags:1][timestamp:8][node:4][value...]} in one array.
 *
 * <p>The value is read from the network straight into an array that leaves {@link #HEADER_BYTES}
 * free in front ({@link #newValueArray(int)}), so turning it into a record writes the header in
 * place instead of copying the value.
 */
public final class Record {

    public static final int HEADER_BYTES = 13;
    private static final byte FLAG_TOMBSTONE = 1;

    private final byte[] bytes;

    private Record(byte[] bytes) {
        this.bytes = bytes;
    }

    /** An array for a value of {@code valueLength} bytes; the value goes at offset {@link #HEADER_BYTES}. */
    public static byte[] newValueArray(int valueLength) {
        return new byte[HEADER_BYTES + valueLength];
    }

    /** A live value: writes the header into {@code valueArray}, which then belongs to the record. */
    public static Record value(Version version, byte[] valueArray) {
        if (valueArray.length < HEADER_BYTES) {
            throw new IllegalArgumentException("value array has no room for the record header");
        }
        writeHeader(valueArray, version, false);
        return new Record(valueArray);
    }

    public static Record tombstone(Version version) {
        byte[] bytes = new byte[HEADER_BYTES];
        writeHeader(bytes, version, true);
        return new Record(bytes);
    }

    /** Reads a record as stored; rejects bytes that cannot be one (a corrupt or foreign entry). */
    public static Record decode(byte[] bytes) {
        if (bytes.length < HEADER_BYTES) {
            throw new IllegalArgumentException("stored record is " + bytes.length + " bytes, shorter than its header");
        }
        if ((bytes[0] & ~FLAG_TOMBSTONE) != 0) {
            throw new IllegalArgumentException("stored record has unknown flags " + bytes[0]);
        }
        if (bytes[0] == FLAG_TOMBSTONE && bytes.length != HEADER_BYTES) {
            throw new IllegalArgumentException("stored tombstone carries a value");
        }
        return new Record(bytes);
    }

    /** Reads just the version from the first {@link #HEADER_BYTES} of a stored record. */
    static Version versionOf(byte[] header) {
        ByteBuffer buffer = ByteBuffer.wrap(header);
        return new Version(buffer.getLong(1), buffer.getInt(9));
    }

    private static void writeHeader(byte[] target, Version version, boolean tombstone) {
        ByteBuffer.wrap(target)
                .put(tombstone ? FLAG_TOMBSTONE : 0)
                .putLong(version.timestamp())
                .putInt(version.node());
    }

    public Version version() {
        return versionOf(bytes);
    }

    public boolean isTombstone() {
        return bytes[0] == FLAG_TOMBSTONE;
    }

    public int valueLength() {
        return bytes.length - HEADER_BYTES;
    }

    /** The value as a read-only view of the record's array (no copy). */
    public ByteBuffer value() {
        return ByteBuffer.wrap(bytes, HEADER_BYTES, valueLength()).slice().asReadOnlyBuffer();
    }

    /** The value bytes, copied. For tests and small values; the serving path uses {@link #value()}. */
    public byte[] valueBytes() {
        byte[] copy = new byte[valueLength()];
        System.arraycopy(bytes, HEADER_BYTES, copy, 0, copy.length);
        return copy;
    }

    /** The stored form. Callers must not modify it. */
    public byte[] encoded() {
        return bytes;
    }

    @Override
    public String toString() {
        return (isTombstone() ? "tombstone@" : "value[" + valueLength() + "]@") + version();
    }
}
