package dev.kvlab.heal;

import dev.kvlab.cluster.RendezvousHashing;
import dev.kvlab.storage.RecordHeader;

/**
 * How repair summarizes records: each key falls into one of {@code buckets} buckets by its hash,
 * and a bucket's hash is the XOR of a hash of each of its records (key and version). Two replicas
 * holding the same records in a bucket get the same hash whatever order they read them in; one
 * record more, less or of another version changes it.
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
        long keyHash = RendezvousHashing.hash(record.key());
        RecordHeader header = record.header();
        long version = RendezvousHashing.mix(RendezvousHashing.mix(header.version().timestamp()) + header.version().node() * 0x9e3779b97f4a7c15L)
                + (header.tombstone() ? 1 : 0);
        hashes[(int) Long.remainderUnsigned(keyHash, hashes.length)] ^= RendezvousHashing.mix(keyHash ^ version);
    }

    long[] hashes() {
        return hashes;
    }
}
