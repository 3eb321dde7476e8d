package dev.kvlab.replication;

import dev.kvlab.storage.Version;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Versions for writes coordinated by this node. A timestamp is {@code wallMillis << 16 | counter}:
 * it follows the wall clock, never goes backwards (when the clock stalls or steps back, the counter
 * grows instead), and moves past every version this node has seen from others ({@link #observe}),
 * so a write that follows another in real time through this node also gets the larger version even
 * when the clocks of the nodes disagree.
 *
 * <p>A version more than {@code maxSkewMillis} ahead of this node's wall clock is not taken in: it
 * comes from a clock further off than the cluster tolerates, or from a forger, and adopting it would
 * drag every later version of this node (and of the nodes that see them) into the future.
 * Replicas refuse to store such versions ({@link #admit}).
 */
public final class HybridLogicalClock {

    private static final int COUNTER_BITS = 16;

    private final int node;
    private final LongSupplier wallMillis;
    private final long maxSkewMillis;
    private final AtomicLong last = new AtomicLong();

    public HybridLogicalClock(int node, LongSupplier wallMillis, long maxSkewMillis) {
        this.node = node;
        this.wallMillis = wallMillis;
        this.maxSkewMillis = maxSkewMillis;
    }

    /** A version newer than every version this clock has issued or observed. */
    public Version now() {
        long physical = wallMillis.getAsLong() << COUNTER_BITS;
        return new Version(last.updateAndGet(previous -> Math.max(previous + 1, physical)), node);
    }

    /** Remembers a version seen elsewhere, so later versions from this clock are newer; ignores one too far ahead. */
    public void observe(Version seen) {
        if (aheadMillis(seen) <= maxSkewMillis) {
            last.accumulateAndGet(seen.timestamp(), Math::max);
        }
    }

    /** How far the version's wall-clock part is ahead of this node's clock, in milliseconds (negative: behind). */
    public long aheadMillis(Version version) {
        return wallMillisOf(version) - wallMillis.getAsLong();
    }

    /** This node's wall clock now, in milliseconds since the epoch: what it judges expiry by. */
    public long wallMillis() {
        return wallMillis.getAsLong();
    }

    /** The wall-clock part of a version: when, in milliseconds since the epoch, its write was made. */
    public static long wallMillisOf(Version version) {
        return version.timestamp() >>> COUNTER_BITS;
    }

    /**
     * Takes in the version of a write this replica is asked to store, or refuses it: a version
     * further ahead of this node's clock than the cluster tolerates would outlive every write made
     * after it, for as long as it is ahead.
     *
     * @throws VersionTooFarAheadException for such a version
     */
    public void admit(Version version) {
        long ahead = aheadMillis(version);
        if (ahead > maxSkewMillis) {
            throw new VersionTooFarAheadException(version, ahead, maxSkewMillis);
        }
        last.accumulateAndGet(version.timestamp(), Math::max);
    }

    public int node() {
        return node;
    }

    /** A stable node id from the node's name, the same on every start (FNV-1a). */
    public static int nodeIdOf(String nodeName) {
        int hash = 0x811c9dc5;
        for (byte b : nodeName.getBytes(StandardCharsets.UTF_8)) {
            hash = (hash ^ (b & 0xff)) * 0x01000193;
        }
        return hash;
    }
}
