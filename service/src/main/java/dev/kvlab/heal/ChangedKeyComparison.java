package dev.kvlab.heal;

import dev.kvlab.cluster.Ownership;
import dev.kvlab.storage.RecordHeader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Compares two replicas' differing buckets by the keys that changed recently on either side, as
 * Cassandra's and Riak's incremental repairs compare only what changed, instead of scanning every
 * record of the buckets.
 *
 * <p>Both sides' bucket hashes are those of their records at a snapshot, and each side knows the
 * header at its snapshot of a set of keys (those it changed recently, and those the other asked for).
 * A differing bucket is <em>explained</em> by the changed keys when, with the records of those keys
 * taken out of both hashes, the hashes agree: then every other record of the bucket is the same on
 * both sides, and comparing the changed keys alone copies what a scan of the bucket would. A bucket
 * with a key one side cannot tell, or whose hashes still differ (a difference older than the changes
 * kept), is not explained, and the round scans it.
 */
final class ChangedKeyComparison {

    /** A key of an explained bucket whose records differ: this side's and the other's header, null where none. */
    record Difference(byte[] key, RecordHeader mine, RecordHeader theirs) {
    }

    /** The buckets explained, and the keys to reconcile in them. */
    record Outcome(BitSet explained, List<Difference> differences) {
    }

    private final Ownership ownership;
    private final String self;
    private final String peer;

    ChangedKeyComparison(Ownership ownership, String self, String peer) {
        this.ownership = ownership;
        this.self = self;
        this.peer = peer;
    }

    /**
     * {@code mine} and {@code theirs}: each side's hashes, and the headers it knows at its snapshot
     * (a key mapped to null: known to have no record); {@code candidates}: the keys changed on either side.
     */
    Outcome compare(long[] mine, Map<ByteBuffer, RecordHeader> mineKnown, long[] theirs, Map<ByteBuffer, RecordHeader> theirsKnown,
                    BitSet differing, Iterable<ByteBuffer> candidates) {
        Map<Integer, List<ByteBuffer>> byBucket = new HashMap<>();
        for (ByteBuffer key : candidates) {
            int bucket = RepairBuckets.bucketOf(key.array(), mine.length);
            if (differing.get(bucket)) {
                byBucket.computeIfAbsent(bucket, unused -> new ArrayList<>()).add(key);
            }
        }
        BitSet explained = new BitSet(mine.length);
        List<Difference> differences = new ArrayList<>();
        for (int bucket = differing.nextSetBit(0); bucket >= 0; bucket = differing.nextSetBit(bucket + 1)) {
            List<ByteBuffer> keys = byBucket.getOrDefault(bucket, List.of());
            long rest = mine[bucket] ^ theirs[bucket];
            boolean known = true;
            for (ByteBuffer key : keys) {
                if (!mineKnown.containsKey(key) || !theirsKnown.containsKey(key)) {
                    known = false;
                    break;
                }
                rest ^= hashOf(key.array(), mineKnown.get(key)) ^ hashOf(key.array(), theirsKnown.get(key));
            }
            if (!known || rest != 0) {
                continue;
            }
            explained.set(bucket);
            for (ByteBuffer key : keys) {
                RecordHeader a = shared(key.array(), mineKnown.get(key));
                RecordHeader b = shared(key.array(), theirsKnown.get(key));
                if (!Objects.equals(a, b)) {
                    differences.add(new Difference(key.array(), a, b));
                }
            }
        }
        return new Outcome(explained, differences);
    }

    /** What a record adds to the hashes the two share: nothing when either does not own it. */
    private long hashOf(byte[] key, RecordHeader header) {
        RecordHeader counted = shared(key, header);
        return counted == null ? 0 : RepairBuckets.hashOf(key, counted);
    }

    /** The header if both sides own the record, as {@link RepairRound#shared} counts it; null otherwise. */
    private RecordHeader shared(byte[] key, RecordHeader header) {
        if (header == null) {
            return null;
        }
        List<String> owners = ownership.ownersOf(key, header.from());
        return owners.contains(self) && owners.contains(peer) ? header : null;
    }
}
