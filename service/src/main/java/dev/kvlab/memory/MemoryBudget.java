package dev.kvlab.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of values a node holds for requests in flight, across all its connections: PUT bodies
 * and their copies on their way to peers, values read from RocksDB, peers' answers a coordinator
 * waits on, read repairs, the records a replica reads or writes for a peer's batch, and the buffers
 * of range streams. Each request takes its share as its values arrive and gives it back when it is
 * done with them; a request that finds no room fails with {@link OverBudgetException} (503) instead
 * of running the heap out. Without this bound a burst of clients reading or writing large values
 * exhausts the heap and the node dies, or lives on half-broken.
 *
 * <p>What is counted is what the bytes take of the heap: under G1 an array of half a heap region or
 * more is humongous and occupies whole regions, so a value of 1 MiB and its record header takes two
 * 1 MiB regions of a small heap. Counted as its bytes, a budget of a quarter of the heap could
 * pin half of it in such values, and a burst of large reads ran a 128 MiB node out of heap.
 */
public final class MemoryBudget {

    private final long limit;
    private final long regionBytes;
    private final AtomicLong held = new AtomicLong();

    /** A budget that counts bytes as they are. */
    public MemoryBudget(long limit) {
        this(limit, 0);
    }

    /**
     * A budget that counts a holding of half a heap region or more as the whole regions it
     * occupies ({@code regionBytes}; 0 when the collector has no humongous regions).
     */
    public MemoryBudget(long limit, long regionBytes) {
        this.limit = limit;
        this.regionBytes = regionBytes;
    }

    private long footprint(long bytes) {
        return footprint(bytes, regionBytes);
    }

    /** What {@code bytes} take of a heap of {@code regionBytes} regions: whole regions for a humongous array. */
    public static long footprint(long bytes, long regionBytes) {
        if (regionBytes <= 0 || bytes < regionBytes / 2) {
            return bytes;
        }
        return (bytes + regionBytes - 1) / regionBytes * regionBytes;
    }

    /** A share for one request (or one batch from a peer): empty, then grown as values arrive. */
    public Lease lease() {
        return new Lease();
    }

    public long limit() {
        return limit;
    }

    /** The bytes held now by all requests. */
    public long held() {
        return held.get();
    }

    private boolean take(long bytes) {
        long current;
        do {
            current = held.get();
            if (current + bytes > limit) {
                return false;
            }
        } while (!held.compareAndSet(current, current + bytes));
        return true;
    }

    /**
     * One request's share of the budget. Thread-safe: the answers of a request's replicas arrive on
     * several threads. It may have several users ({@link #share}): it gives its bytes back when the
     * last one has released it, and takes nothing more after that.
     */
    public final class Lease {

        private final AtomicLong bytes = new AtomicLong();
        private int users = 1;

        private Lease() {
        }

        /** Takes {@code more} bytes (their heap footprint); false, and nothing taken, when the budget has no room (or the lease is released). */
        public boolean tryHold(long more) {
            long footprint = footprint(more);
            synchronized (this) {
                if (users == 0 || !take(footprint)) {
                    return false;
                }
                bytes.addAndGet(footprint);
                return true;
            }
        }

        /** Takes {@code more} bytes, or fails with {@link OverBudgetException}. */
        public void hold(long more) {
            if (!tryHold(more)) {
                throw overBudget();
            }
        }

        /** One more user of this lease, who must {@link #release} it too. */
        public synchronized Lease share() {
            if (users > 0) {
                users++;
            }
            return this;
        }

        /** One user is done with the lease; the last one gives all its bytes back. Extra calls do nothing. */
        public void release() {
            synchronized (this) {
                if (users == 0 || --users > 0) {
                    return;
                }
            }
            held.addAndGet(-bytes.getAndSet(0));
        }

        /** The bytes this lease holds now. */
        public long held() {
            return bytes.get();
        }

        /** The failure of a request that found no room in the budget. */
        public OverBudgetException overBudget() {
            return new OverBudgetException(limit);
        }
    }
}
