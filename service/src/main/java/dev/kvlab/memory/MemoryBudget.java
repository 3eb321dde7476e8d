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
 *
 * <p>A node's budget may keep a share apart for the work it does for its peers' requests
 * ({@link #forReplicaWork}): every node coordinates requests and serves its peers' reads, and with
 * one pool for both, coordinators that each hold room for their requests' answers could leave no
 * room anywhere for the replica reads those answers need, and every request would fail.
 */
public final class MemoryBudget {

    private final long limit;
    private final long regionBytes;
    private final AtomicLong held = new AtomicLong();
    /** The share for peers' requests; this budget itself when it keeps none apart. */
    private final MemoryBudget replicaWork;

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
        this.replicaWork = this;
    }

    /**
     * A budget of {@code limit} bytes in all, {@code replicaLimit} of them kept for the work this
     * node does for its peers' requests ({@link #forReplicaWork}), the rest for the requests it
     * coordinates itself.
     */
    public MemoryBudget(long limit, long regionBytes, long replicaLimit) {
        if (replicaLimit <= 0 || replicaLimit >= limit) {
            throw new IllegalArgumentException("the replicas' share must be within 1.." + (limit - 1) + " bytes, was " + replicaLimit);
        }
        this.limit = limit - replicaLimit;
        this.regionBytes = regionBytes;
        this.replicaWork = new MemoryBudget(replicaLimit, regionBytes);
    }

    /**
     * The budget of the work this node does for its peers' requests: the records a peer's batch
     * reads or writes, its frames, the streams it serves them. A share of its own, so that neither
     * side can take all the room the other needs; this budget itself when none is kept apart.
     */
    public MemoryBudget forReplicaWork() {
        return replicaWork;
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

    /** The bytes this budget lets requests hold (without its replicas' share, when it keeps one apart). */
    public long limit() {
        return limit;
    }

    /** The bytes held now by all requests, its replicas' share included. */
    public long held() {
        return replicaWork == this ? held.get() : held.get() + replicaWork.held();
    }

    /** The bytes of this budget and its replicas' share together. */
    public long totalLimit() {
        return replicaWork == this ? limit : limit + replicaWork.limit();
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
        /** Of {@link #bytes}, those taken ahead for values still to come ({@link #expect}). */
        private long reserved;
        /** Values the next one held takes room for, itself included ({@link #expect}). */
        private int expected;
        private int users = 1;

        private Lease() {
        }

        /** Takes {@code more} bytes (their heap footprint); false, and nothing taken, when the budget has no room (or the lease is released). */
        public boolean tryHold(long more) {
            long footprint = footprint(more);
            synchronized (this) {
                if (users == 0) {
                    return false;
                }
                if (expected > 1) {
                    // The first value of several: room for them all, or for none.
                    long ahead = footprint * (expected - 1);
                    if (!take(footprint + ahead)) {
                        return false;
                    }
                    expected = 0;
                    reserved += ahead;
                    bytes.addAndGet(footprint + ahead);
                    return true;
                }
                long fromReserved = Math.min(reserved, footprint);
                if (!take(footprint - fromReserved)) {
                    return false;
                }
                reserved -= fromReserved;
                bytes.addAndGet(footprint - fromReserved);
                return true;
            }
        }

        /**
         * Says that {@code values} values of about one size are to come (the replicas' answers to
         * one read): the first of them to be held takes room for them all at once, or fails and
         * takes nothing ({@link #tryHold}); the others then take the room kept for them and never
         * find the budget full (one larger than its room takes what it lacks, if there is any).
         * Taking room value by value instead, a burst of requests could each hold some of its
         * values and none find room for all of them. 0 or 1: each value for itself.
         */
        public synchronized void expect(int values) {
            expected = values;
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
                reserved = 0;
                expected = 0;
            }
            held.addAndGet(-bytes.getAndSet(0));
        }

        /** The bytes this lease holds now. */
        public long held() {
            return bytes.get();
        }

        /** Whether the budget has room now for {@code count} values of {@code each} bytes: a hint, as others may take it meanwhile. */
        public boolean budgetHasRoomFor(long each, int count) {
            return held.get() + footprint(each) * count <= limit;
        }

        /** The failure of a request that found no room in the budget. */
        public OverBudgetException overBudget() {
            return new OverBudgetException(limit);
        }

        /** The bytes this lease has taken ahead and no value has used yet. */
        public synchronized long reserved() {
            return reserved;
        }
    }
}
