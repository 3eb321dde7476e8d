package dev.kvlab.storage;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Whether a point read first asks RocksDB's memory ({@link RocksStore#readFromMemory}) before it
 * goes to a storage thread. That attempt walks the same index and filter blocks the storage read
 * then walks again, so when the data has outgrown the cache and most attempts miss, it is CPU spent
 * for nothing. The choice follows the recent hit rate: after a window of attempts that answered
 * less than {@code minHitRate} of the time, reads skip the attempt, all but one in
 * {@code probeEvery}, whose attempts make the next window; once a window answers often enough
 * again (the working set came back into the cache), every read tries again.
 *
 * <p>Only where a read is served is chosen, never what it answers: a read that skips the attempt
 * is read on a storage thread, as one the attempt missed is. Called from event loops at once.
 */
final class MemoryTierChoice {

    private final boolean adaptive;
    private final int window;
    private final double minHitRate;
    private final int probeEvery;

    /** True while reads skip the attempt but for the probes. */
    private volatile boolean skipping;
    /** Reads since skipping began, to pick the probes. */
    private final AtomicLong sinceSkipping = new AtomicLong();
    /** The current window's attempts and those that memory answered. */
    private final AtomicInteger attempts = new AtomicInteger();
    private final AtomicInteger answered = new AtomicInteger();
    private final LongAdder skipped = new LongAdder();

    MemoryTierChoice(StorageProperties.MemoryReads settings) {
        this.adaptive = settings.adaptive();
        this.window = settings.window();
        this.minHitRate = settings.minHitRate();
        this.probeEvery = settings.probeEvery();
    }

    /** Whether this read should ask memory first; if so, {@link #tried} must be told what it found. */
    boolean worthTrying() {
        if (!skipping) {
            return true;
        }
        if (sinceSkipping.incrementAndGet() % probeEvery == 0) {
            return true;
        }
        skipped.increment();
        return false;
    }

    /**
     * What an attempt found: whether memory answered (a record, or that there is none). Lock-free,
     * as every read that asks memory comes here from an event loop: the window is closed by the
     * attempt that fills it, and attempts counted while it closes may fall into either window.
     */
    void tried(boolean memoryAnswered) {
        if (!adaptive) {
            return;
        }
        if (memoryAnswered) {
            answered.incrementAndGet();
        }
        if (attempts.incrementAndGet() == window) {
            int hits = answered.getAndSet(0);
            attempts.set(0);
            boolean skip = hits < minHitRate * window;
            if (skip && !skipping) {
                sinceSkipping.set(0);
            }
            skipping = skip;
        }
    }

    /** Whether reads now skip the attempt, but for the probes. */
    boolean skipping() {
        return skipping;
    }

    /** Reads that went to a storage thread without asking memory, so far. */
    long skipped() {
        return skipped.sum();
    }
}
