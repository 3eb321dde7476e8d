package dev.kvlab.heal;

import dev.kvlab.cluster.RendezvousHashing;
import dev.kvlab.storage.RecordHeader;

/**
 * How repair summarizes records: each key falls into one of {@code buckets} buckets by its hash,
 * and a bucket's hash is the XOR of a hash of each of its records (key and version). Two replicas
 * holding the same records in a bucket get the same hash whatever order they read them in; one
 * record more, less or of another version changes it.
 *
 * <p>A record's hash marks the writes that hold no value, or will not: deletes, and writes that
 * expire, whether expired, reaped into a tombstone ({@link dev.kvlab.storage.Record#reaped}) or
 * not yet. Those are the same write on every replica, so a replica that reaped an expired record
 * and one that has not yet hash it alike, at any time, whatever their clocks say: expiry alone
 * makes no bucket differ. (Records that never expire hash as they did before expiry existed.)
 */
final class RepairBuckets {

    private final long[] hashes;

    RepairBuckets(int buckets) {
        this.hashes = new long[buckets];
    }

    static int bucketOf(byte[] key, int buckets) {
        return (int) Long.remainderUnsigned(RendezvousHashing.hash(key), buckets);
    }

    void add(RecordHeader.Keyed record) {
        toggle(hashes, record.key(), record.header());
    }

    /**
     * Adds the record {@code key} holds to {@code hashes}, or takes it out if it was in: XOR is its
     * own inverse, which is what lets {@link MaintainedBucketHashes} follow changes without a scan.
     */
    static void toggle(long[] hashes, byte[] key, RecordHeader header) {
        hashes[bucketOf(key, hashes.length)] ^= hashOf(key, header);
    }

    /** What the record {@code header} of {@code key} adds to its bucket's hash. */
    static long hashOf(byte[] key, RecordHeader header) {
        long keyHash = RendezvousHashing.hash(key);
        long version = RendezvousHashing.mix(RendezvousHashing.mix(header.version().timestamp()) + header.version().node() * 0x9e3779b97f4a7c15L)
                + (header.tombstone() || header.expires() ? 1 : 0);
        return RendezvousHashing.mix(keyHash ^ version);
    }

    long[] hashes() {
        return hashes;
    }
}
