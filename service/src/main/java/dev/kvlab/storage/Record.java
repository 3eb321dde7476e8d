package dev.kvlab.storage;

import java.nio.ByteBuffer;

/**
 * What RocksDB stores under a key: a version, a tombstone flag, the number of replicas the write
 * was asked of, and the value, encoded as {@code [timestamp:8][node:4][flags:1][value...]} in one
 * array, big-endian, the node's sign bit flipped. The flags byte holds the tombstone in its lowest
 * bit and the write's {@code from} in the seven above it (0: not known, a record written before
 * kvlab kept it): which nodes own the key follows from it.
 *
 * <p>The layout makes records of one key compare as unsigned bytes the way their versions compare,
 * so RocksDB's {@code max} merge operator keeps the newest write without a read before each write
 * ({@link RocksStore#write}). Two records with the same version are the same write.
 *
 * <p>The value is read from the network straight into an array that leaves {@link #HEADER_BYTES}
 * free in front ({@link #newValueArray(int)}), so turning it into a record writes the header in
 * place instead of copying the value.
 */
public final class Record {

    public static final int HEADER_BYTES = 13;
    /** The largest {@code from} a record keeps. */
    public static final int MAX_FROM = 127;
    /** A record's {@code from} when the write did not say (a record of kvlab's earlier releases). */
    public static final int UNKNOWN_FROM = 0;
    private static final int FLAGS_OFFSET = 12;
    private static final byte FLAG_TOMBSTONE = 1;

    private final byte[] bytes;

    private Record(byte[] bytes) {
        this.bytes = bytes;
    }

    /** An array for a value of {@code valueLength} bytes; the value goes at offset {@link #HEADER_BYTES}. */
    public static byte[] newValueArray(int valueLength) {
        return new byte[HEADER_BYTES + valueLength];
    }

    /**
     * A live value of a write asked of {@code from} replicas: writes the header into
     * {@code valueArray}, which then belongs to the record.
     */
    public static Record value(Version version, int from, byte[] valueArray) {
        if (valueArray.length < HEADER_BYTES) {
            throw new IllegalArgumentException("value array has no room for the record header");
        }
        writeHeader(valueArray, version, from, false);
        return new Record(valueArray);
    }

    /** A live value whose {@code from} is not known. */
    public static Record value(Version version, byte[] valueArray) {
        return value(version, UNKNOWN_FROM, valueArray);
    }

    /** A delete asked of {@code from} replicas. */
    public static Record tombstone(Version version, int from) {
        byte[] bytes = new byte[HEADER_BYTES];
        writeHeader(bytes, version, from, true);
        return new Record(bytes);
    }

    /** A delete whose {@code from} is not known. */
    public static Record tombstone(Version version) {
        return tombstone(version, UNKNOWN_FROM);
    }

    /** A record of the header alone, with no value: what repair sends of a record to compare it. */
    public static Record of(RecordHeader header) {
        return header.tombstone() ? tombstone(header.version(), header.from()) : value(header.version(), header.from(), newValueArray(0));
    }

    /** Reads a record as stored; rejects bytes that cannot be one (a corrupt or foreign entry). */
    public static Record decode(byte[] bytes) {
        if (bytes.length < HEADER_BYTES) {
            throw new IllegalArgumentException("stored record is " + bytes.length + " bytes, shorter than its header");
        }
        if ((bytes[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0 && bytes.length != HEADER_BYTES) {
            throw new IllegalArgumentException("stored tombstone carries a value");
        }
        return new Record(bytes);
    }

    private static void writeHeader(byte[] target, Version version, int from, boolean tombstone) {
        if (from < 0 || from > MAX_FROM) {
            throw new IllegalArgumentException("a record keeps a from of 0 to " + MAX_FROM + ", not " + from);
        }
        ByteBuffer.wrap(target)
                .putLong(version.timestamp())
                // Flipping the sign bit orders node ids, which may be negative, as unsigned bytes.
                .putInt(version.node() ^ Integer.MIN_VALUE)
                .put((byte) (from << 1 | (tombstone ? FLAG_TOMBSTONE : 0)));
    }

    public Version version() {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        return new Version(buffer.getLong(0), buffer.getInt(8) ^ Integer.MIN_VALUE);
    }

    public boolean isTombstone() {
        return (bytes[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0;
    }

    public RecordHeader header() {
        return RecordHeader.of(bytes);
    }

    /** How many replicas the write was asked of ({@code from}), or {@link #UNKNOWN_FROM}. */
    public int from() {
        return (bytes[FLAGS_OFFSET] & 0xff) >>> 1;
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
        return (isTombstone() ? "tombstone@" : "value[" + valueLength() + "]@") + version() + " from " + from();
    }
}
