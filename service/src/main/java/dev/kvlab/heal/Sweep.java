package dev.kvlab.heal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A handoff sweep's progress and result: the records it read, sent, moved away (deleted here once
 * their owners held them), purged, and could not send. A leave's passes and its last pass are
 * sweeps too.
 */
public final class Sweep {

    private final long startedMillis;
    private final AtomicLong scanned = new AtomicLong();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong movedAway = new AtomicLong();
    private final AtomicLong purged = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile long finishedMillis;

    Sweep(long startedMillis) {
        this.startedMillis = startedMillis;
    }

    public long startedMillis() {
        return startedMillis;
    }

    /** 0 while it runs. */
    public long finishedMillis() {
        return finishedMillis;
    }

    public long scanned() {
        return scanned.get();
    }

    public long sent() {
        return sent.get();
    }

    public long movedAway() {
        return movedAway.get();
    }

    public long purged() {
        return purged.get();
    }

    public long failed() {
        return failed.get();
    }

    void countScanned() {
        scanned.incrementAndGet();
    }

    void countSent() {
        sent.incrementAndGet();
    }

    void countFailed() {
        failed.incrementAndGet();
    }

    void countDeleted(long moved, long purgedTombstones) {
        movedAway.addAndGet(moved);
        purged.addAndGet(purgedTombstones);
    }

    void finish(long atMillis) {
        finishedMillis = atMillis;
    }
}
