package dev.kvlab.storage;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reclaims the space of expired records: every {@code reapInterval}, turns the records whose
 * expiry passed more than {@code delay} ago into tombstones of their version
 * ({@link RocksStore#reapExpired}), a small batch per storage task, up to a bound per tick; RocksDB's
 * compaction then drops their values' bytes ({@link ExpiryIndex} says why not a compaction filter).
 *
 * <p>The {@code delay} is the cluster's tolerated clock skew: before a reaped tombstone
 * answers 404 whatever the reader's clock says, every node's clock has passed the expiry, so the
 * coordinator's clock still decides a read near the expiry as it does for a record not reaped yet.
 */
public final class ExpiryReaper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ExpiryReaper.class);
    /** How long a tick waits for one storage task: the storage queue may be full of client work. */
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

    private final LocalStore store;
    private final LongSupplier wallMillis;
    private final long delayMillis;
    private final int batch;
    private final int maxPerTick;
    private final ScheduledExecutorService ticks;
    private final AtomicLong reaped = new AtomicLong();

    public ExpiryReaper(LocalStore store, LongSupplier wallMillis, Duration delay, ExpiryProperties properties) {
        this.store = store;
        this.wallMillis = wallMillis;
        this.delayMillis = delay.toMillis();
        this.batch = properties.reapBatch();
        this.maxPerTick = properties.maxReapedPerTick();
        this.ticks = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "kvlab-expiry-reaper");
            thread.setDaemon(true);
            return thread;
        });
        long interval = properties.reapInterval().toMillis();
        ticks.scheduleWithFixedDelay(this::tick, interval, interval, TimeUnit.MILLISECONDS);
    }

    /** One tick: batches until the expired entries run out or the tick's bound is reached. */
    void tick() {
        try {
            long deadline = wallMillis.getAsLong() - delayMillis;
            int done = 0;
            while (done < maxPerTick) {
                int limit = Math.min(batch, maxPerTick - done);
                ExpiryIndex.Reaped step = store.onStorage(rocks -> rocks.reapExpired(deadline, limit)).block(STEP_TIMEOUT);
                if (step == null) {
                    return;
                }
                reaped.addAndGet(step.records());
                done += step.entries();
                if (step.entries() < limit) {
                    return;
                }
            }
        } catch (StoreClosedException closing) {
            // the node is stopping
        } catch (RuntimeException e) {
            // A full storage queue or a failed write: the next tick tries again.
            log.warn("reaping expired records failed: {}", e.toString());
        }
    }

    /** Expired records reaped (turned into tombstones) since the node started. */
    public long reaped() {
        return reaped.get();
    }

    @Override
    public void close() {
        ticks.shutdownNow();
        try {
            ticks.awaitTermination(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
