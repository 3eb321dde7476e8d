package dev.kvlab.replication;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Record;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After a read has been answered, brings the replicas it saw holding an older version (or nothing,
 * while others hold a value) up to the newest one. Runs in the background and is bounded: when
 * {@code maxInFlight} repairs are already running, or the node's memory budget has no room for the
 * record on its way to the stale replica, a repair is skipped, since a later read will notice the
 * stale replica again.
 */
public final class ReadRepair {

    private static final Logger log = LoggerFactory.getLogger(ReadRepair.class);

    private final Semaphore inFlight;
    private final Duration timeout;
    private final MemoryBudget budget;
    private final AtomicLong repaired = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    public ReadRepair(int maxInFlight, Duration timeout, MemoryBudget budget) {
        this.inFlight = new Semaphore(maxInFlight);
        this.timeout = timeout;
        this.budget = budget;
    }

    void repair(byte[] key, List<ReplicaAnswer> answers) {
        Record newest = ReplicaAnswer.newest(answers);
        if (newest == null) {
            return;
        }
        for (ReplicaAnswer answer : answers) {
            if (isStale(answer.record(), newest)) {
                send(key, newest, answer.replica());
            }
        }
    }

    /** A replica is stale if it lacks a live value others have, or holds an older version than the newest. */
    private static boolean isStale(Record seen, Record newest) {
        if (seen == null) {
            return !newest.isTombstone();
        }
        return newest.version().isNewerThan(seen.version());
    }

    private void send(byte[] key, Record newest, Replica replica) {
        if (!inFlight.tryAcquire()) {
            skipped.incrementAndGet();
            return;
        }
        MemoryBudget.Lease lease = budget.lease();
        if (!lease.tryHold(newest.encoded().length)) {
            inFlight.release();
            skipped.incrementAndGet();
            return;
        }
        replica.write(key, newest)
                .timeout(timeout)
                .doFinally(signal -> {
                    lease.release();
                    inFlight.release();
                })
                .subscribe(null,
                        error -> {
                            failed.incrementAndGet();
                            log.debug("read repair of {} failed: {}", replica, error.toString());
                        },
                        repaired::incrementAndGet);
    }

    public long repaired() {
        return repaired.get();
    }

    public long skipped() {
        return skipped.get();
    }

    public long failed() {
        return failed.get();
    }
}
