package dev.kvlab.replication;

import dev.kvlab.storage.Version;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Versions for writes coordinated by this node. A timestamp is {@code wallMillis << 16 | counter}:
 * it follows the wall clock, never goes backwards (when the clock stalls or steps back, the counter
 * grows instead), and moves past every version this node has seen from others ({@link #observe}),
 * so a write that follows another in real time through this node also gets the larger version even
 * when the clocks of the nodes disagree.
 */
public final class HybridLogicalClock {

    private static final int COUNTER_BITS = 16;

    private final int node;
    private final LongSupplier wallMillis;
    private final AtomicLong last = new AtomicLong();

    public HybridLogicalClock(int node, LongSupplier wallMillis) {
        this.node = node;
        this.wallMillis = wallMillis;
    }

    public HybridLogicalClock(int node) {
        this(node, System::currentTimeMillis);
    }

    /** A version newer than every version this clock has issued or observed. */
    public Version now() {
        long physical = wallMillis.getAsLong() << COUNTER_BITS;
        return new Version(last.updateAndGet(previous -> Math.max(previous + 1, physical)), node);
    }

    /** Remembers a version seen elsewhere, so later versions from this clock are newer. */
    public void observe(Version seen) {
        last.accumulateAndGet(seen.timestamp(), Math::max);
    }

    public int node() {
        return node;
    }

    /** A stable node id from the node's name, the same on every start (FNV-1a). */
    public static int nodeIdOf(String nodeName) {
        int hash = 0x811c9dc5;
        for (byte b : nodeName.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            hash = (hash ^ (b & 0xff)) * 0x01000193;
        }
        return hash;
    }
}
