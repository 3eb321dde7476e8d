package dev.kvlab.storage;

import java.nio.ByteBuffer;

/**
 * What RocksDB stores under a key: a version, a tombstone flag, the number of replicas the write
 * was asked of, and the value, encoded as {@code [timestamp:8][node:4][flags:1][value...]} in one
 * array, big-endian, the node's sign bit flipped. The flags byte holds the tombstone in its lowest
 * bit, the write's {@code from} in the six above it (0: not known, a record written before kvlab
 * kept it): which nodes own the key follows from it; and in its highest bit whether the write
 * expires. An expiring record carries when, {@code [expiresAt:8]} (wall-clock milliseconds since
 * the epoch), between the flags and the value: {@code [timestamp:8][node:4][flags:1][expiresAt:8][value...]}.
 *
 * <p>The expiry is the write's version's wall-clock milliseconds plus its time to live, fixed when
 * the coordinator makes the record: every replica, hint, repair copy, handoff and backup carries
 * these same bytes, so all agree on when the write expires. An expired record is dead as a
 * tombstone of its version is ({@link #isDeadAt}); once reaped ({@link #reaped}) it is one.
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

    /** The header every record has; an expiring record has {@link #EXPIRY_BYTES} more. */
    public static final int HEADER_BYTES = 13;
    /** The expiry an expiring record carries after its header. */
    public static final int EXPIRY_BYTES = 8;
    /** The longest header: an expiring record's. Records are at most this plus the largest value. */
    public static final int MAX_HEADER_BYTES = HEADER_BYTES + EXPIRY_BYTES;
    /**
     * The largest {@code from} a record keeps: six bits, since the flags' highest bit says whether
     * the write expires. (Earlier releases allowed 127; a cluster never had more than 63 owners of a
     * key unless it had 64 nodes or more.)
     */
    public static final int MAX_FROM = 63;
    /** {@link #expiresAtMillis()} of a record that never expires. */
    public static final long NEVER = Long.MAX_VALUE;
    /** A record's {@code from} when the write did not say (a record of kvlab's earlier releases). */
    public static final int UNKNOWN_FROM = 0;
    private static final int FLAGS_OFFSET = 12;
    private static final byte FLAG_TOMBSTONE = 1;
    private static final int FLAG_EXPIRES = 0x80;

    private final byte[] bytes;

    private Record(byte[] bytes) {
        this.bytes = bytes;
    }

    /** An array for a value of {@code valueLength} bytes; the value goes at offset {@link #HEADER_BYTES}. */
    public static byte[] newValueArray(int valueLength) {
        return new byte[HEADER_BYTES + valueLength];
    }

    /** The room in front of the value: {@link #MAX_HEADER_BYTES} for a write that expires, else {@link #HEADER_BYTES}. */
    public static int headerBytes(boolean expires) {
        return expires ? MAX_HEADER_BYTES : HEADER_BYTES;
    }

    /**
     * A live value of a write asked of {@code from} replicas: writes the header into
     * {@code valueArray}, which then belongs to the record.
     */
    public static Record value(Version version, int from, byte[] valueArray) {
        if (valueArray.length < HEADER_BYTES) {
            throw new IllegalArgumentException("value array has no room for the record header");
        }
        writeHeader(valueArray, version, from, false, NEVER);
        return new Record(valueArray);
    }

    /**
     * A live value that expires at {@code expiresAtMillis}: {@code valueArray} has
     * {@link #MAX_HEADER_BYTES} free in front of the value ({@link #headerBytes}).
     */
    public static Record expiringValue(Version version, int from, long expiresAtMillis, byte[] valueArray) {
        if (valueArray.length < MAX_HEADER_BYTES) {
            throw new IllegalArgumentException("value array has no room for the header of an expiring record");
        }
        if (expiresAtMillis <= 0 || expiresAtMillis == NEVER) {
            throw new IllegalArgumentException("an expiry must be a positive time, not " + expiresAtMillis);
        }
        writeHeader(valueArray, version, from, false, expiresAtMillis);
        return new Record(valueArray);
    }

    /** A live value whose {@code from} is not known. */
    public static Record value(Version version, byte[] valueArray) {
        return value(version, UNKNOWN_FROM, valueArray);
    }

    /** A delete asked of {@code from} replicas. */
    public static Record tombstone(Version version, int from) {
        byte[] bytes = new byte[HEADER_BYTES];
        writeHeader(bytes, version, from, true, NEVER);
        return new Record(bytes);
    }

    /**
     * What an expired record leaves once reaped: a tombstone of the same version, from and expiry,
     * without the value. Its bytes compare greater than the expired value's (the tombstone bit, the
     * first byte they differ in), so RocksDB's {@code max} merge keeps it over a late copy of the
     * value, and repair and reads see the same version.
     */
    public static Record reaped(Record expiring) {
        if (!expiring.expires()) {
            throw new IllegalArgumentException("only an expiring record is reaped, not " + expiring);
        }
        byte[] bytes = new byte[MAX_HEADER_BYTES];
        writeHeader(bytes, expiring.version(), expiring.from(), true, expiring.expiresAtMillis());
        return new Record(bytes);
    }

    /** A delete whose {@code from} is not known. */
    public static Record tombstone(Version version) {
        return tombstone(version, UNKNOWN_FROM);
    }

    /** A record of the header alone, with no value: what repair sends of a record to compare it. */
    public static Record of(RecordHeader header) {
        if (header.expires()) {
            Record value = expiringValue(header.version(), header.from(), header.expiresAtMillis(), new byte[MAX_HEADER_BYTES]);
            return header.tombstone() ? reaped(value) : value;
        }
        return header.tombstone() ? tombstone(header.version(), header.from()) : value(header.version(), header.from(), newValueArray(0));
    }

    /** Reads a record as stored; rejects bytes that cannot be one (a corrupt or foreign entry). */
    public static Record decode(byte[] bytes) {
        if (bytes.length < HEADER_BYTES) {
            throw new IllegalArgumentException("stored record is " + bytes.length + " bytes, shorter than its header");
        }
        boolean expires = (bytes[FLAGS_OFFSET] & FLAG_EXPIRES) != 0;
        int header = headerBytes(expires);
        if (bytes.length < header) {
            throw new IllegalArgumentException("stored expiring record is " + bytes.length + " bytes, shorter than its header");
        }
        if ((bytes[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0 && bytes.length != header) {
            throw new IllegalArgumentException("stored tombstone carries a value");
        }
        if (expires && ByteBuffer.wrap(bytes).getLong(HEADER_BYTES) <= 0) {
            throw new IllegalArgumentException("stored expiring record has no expiry");
        }
        return new Record(bytes);
    }

    private static void writeHeader(byte[] target, Version version, int from, boolean tombstone, long expiresAtMillis) {
        if (from < 0 || from > MAX_FROM) {
            throw new IllegalArgumentException("a record keeps a from of 0 to " + MAX_FROM + ", not " + from);
        }
        boolean expires = expiresAtMillis != NEVER;
        ByteBuffer buffer = ByteBuffer.wrap(target)
                .putLong(version.timestamp())
                // Flipping the sign bit orders node ids, which may be negative, as unsigned bytes.
                .putInt(version.node() ^ Integer.MIN_VALUE)
                .put((byte) ((expires ? FLAG_EXPIRES : 0) | from << 1 | (tombstone ? FLAG_TOMBSTONE : 0)));
        if (expires) {
            buffer.putLong(expiresAtMillis);
        }
    }

    public Version version() {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        return new Version(buffer.getLong(0), buffer.getInt(8) ^ Integer.MIN_VALUE);
    }

    public boolean isTombstone() {
        return (bytes[FLAGS_OFFSET] & FLAG_TOMBSTONE) != 0;
    }

    /** Whether the write expires (then {@link #expiresAtMillis()} says when), reaped or not. */
    public boolean expires() {
        return (bytes[FLAGS_OFFSET] & FLAG_EXPIRES) != 0;
    }

    /** When the write expires, in wall-clock milliseconds since the epoch; {@link #NEVER} when it does not. */
    public long expiresAtMillis() {
        return expires() ? ByteBuffer.wrap(bytes).getLong(HEADER_BYTES) : NEVER;
    }

    /**
     * Whether the record holds no value at {@code nowMillis}: a tombstone, or a value that expired
     * by then. A dead record is what a delete of its version would have left: reads answer 404 and
     * ranges skip the key.
     */
    public boolean isDeadAt(long nowMillis) {
        return isTombstone() || expiresAtMillis() <= nowMillis;
    }

    public RecordHeader header() {
        return RecordHeader.of(bytes);
    }

    /** How many replicas the write was asked of ({@code from}), or {@link #UNKNOWN_FROM}. */
    public int from() {
        return (bytes[FLAGS_OFFSET] & 0x7f) >>> 1;
    }

    public int valueLength() {
        return bytes.length - valueOffset();
    }

    private int valueOffset() {
        return headerBytes(expires());
    }

    /** The value as a read-only view of the record's array (no copy). */
    public ByteBuffer value() {
        return ByteBuffer.wrap(bytes, valueOffset(), valueLength()).slice().asReadOnlyBuffer();
    }

    /** The value bytes, copied. For tests and small values; the serving path uses {@link #value()}. */
    public byte[] valueBytes() {
        byte[] copy = new byte[valueLength()];
        System.arraycopy(bytes, valueOffset(), copy, 0, copy.length);
        return copy;
    }

    /** The stored form. Callers must not modify it. */
    public byte[] encoded() {
        return bytes;
    }

    @Override
    public String toString() {
        return (isTombstone() ? "tombstone@" : "value[" + valueLength() + "]@") + version() + " from " + from()
                + (expires() ? " expiring at " + expiresAtMillis() : "");
    }
}
