package dev.kvlab.cluster;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * This node's wall clock in milliseconds since the epoch: the system's, shifted by
 * {@code kvlab.cluster.clock-offset}. The shift lets a lab give one node a clock that runs minutes
 * ahead or behind, and watch what the cluster makes of it; in production it is zero.
 */
public final class WallClock implements LongSupplier {

    private final long offsetMillis;

    public WallClock(Duration offset) {
        this.offsetMillis = offset.toMillis();
    }

    @Override
    public long getAsLong() {
        return System.currentTimeMillis() + offsetMillis;
    }
}
