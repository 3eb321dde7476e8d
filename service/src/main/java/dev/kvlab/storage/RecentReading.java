package dev.kvlab.storage;

import java.util.function.Supplier;

/**
 * A figure of the store read at most every 100 ms: a scrape asks for several figures of one
 * reading. Once the store is closed, the last reading (or {@code none}, if there was none).
 */
final class RecentReading<T> {

    private static final long MAX_AGE_NANOS = 100_000_000L;

    private final Supplier<T> read;
    private final T none;
    private volatile T last;
    private volatile long readAt;

    RecentReading(Supplier<T> read, T none) {
        this.read = read;
        this.none = none;
    }

    T get() {
        long now = System.nanoTime();
        T reading = last;
        if (reading == null || now - readAt > MAX_AGE_NANOS) {
            try {
                reading = read.get();
                last = reading;
                readAt = now;
            } catch (StorageException closed) {
                return reading == null ? none : reading;
            }
        }
        return reading;
    }
}
