package dev.kvlab.backup;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * How fast a node's backup reads its files and records ({@code kvlab.backup.max-bytes-per-second}),
 * as RocksDB's own backup engine limits its rate: checksums, uploads and the count of records read
 * a snapshot at this pace, so a backup takes a steady slice of the disk and a core instead of all
 * it can get while the node serves. Blocking: only the backup thread waits on it. A pace of 0 is no
 * limit.
 */
public final class BackupPace {

    /** Reads may run this far ahead of the pace before they wait: bursts stay short. */
    private static final long BURST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final long bytesPerSecond;
    private final LongSupplier nanoTime;
    private final Sleeper sleeper;
    /** When the bytes taken so far are due at the pace. */
    private long dueNanos;

    /** How the pace waits: {@link TimeUnit#sleep} but in tests. */
    interface Sleeper {
        void sleep(long nanos) throws InterruptedException;
    }

    public BackupPace(long bytesPerSecond) {
        this(bytesPerSecond, System::nanoTime, TimeUnit.NANOSECONDS::sleep);
    }

    BackupPace(long bytesPerSecond, LongSupplier nanoTime, Sleeper sleeper) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("kvlab.backup.max-bytes-per-second must not be negative, was " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.nanoTime = nanoTime;
        this.sleeper = sleeper;
        this.dueNanos = nanoTime.getAsLong();
    }

    public static BackupPace unlimited() {
        return new BackupPace(0);
    }

    /** Counts {@code bytes} read and waits until the pace allows them. */
    public synchronized void take(long bytes) throws InterruptedIOException {
        if (bytesPerSecond == 0 || bytes <= 0) {
            return;
        }
        long now = nanoTime.getAsLong();
        // An idle pace does not save up: after a pause, reads go on at the pace, not at full speed.
        dueNanos = Math.max(dueNanos, now) + bytes * 1_000_000_000L / bytesPerSecond;
        long wait = dueNanos - now - BURST_NANOS;
        if (wait > 0) {
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("the backup was stopped while it waited for its pace");
            }
        }
    }

    /** {@link #take} for code that cannot throw an IOException: a wait interrupted fails unchecked. */
    public LongConsumer taker() {
        return bytes -> {
            try {
                take(bytes);
            } catch (InterruptedIOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    /** {@code in}, read at this pace. */
    public InputStream paced(InputStream in) {
        if (bytesPerSecond == 0) {
            return in;
        }
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    take(1);
                }
                return b;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                int read = super.read(buffer, offset, length);
                take(read);
                return read;
            }

            @Override
            public long skip(long n) throws IOException {
                long skipped = super.skip(n);
                take(skipped);
                return skipped;
            }
        };
    }
}
