package dev.kvlab.backup;

import java.util.concurrent.atomic.AtomicLong;

/**
 * This node's backups as its status and metrics show them: the backup it coordinates or takes its
 * part of now, its last part (ok or failed), the bytes it sent, and the backups that failed.
 */
public final class BackupStatus {

    /** A backup under way on this node: coordinated here, or this node's part of it. */
    public record Running(String backup, long startedMillis, boolean coordinating) {
    }

    /**
     * This node's part of a backup, done: {@code error} null when it is stored whole.
     *
     * @param where the target it went to
     */
    public record Part(String backup, long startedMillis, long finishedMillis, long bytes, long uploadedBytes, long keys,
                       String where, String error) {

        public String outcome() {
            return error == null ? "ok" : "failed";
        }

        public long durationMillis() {
            return finishedMillis - startedMillis;
        }
    }

    private volatile Running coordinated;
    private volatile Running part;
    private volatile Part last;
    private volatile Part lastSuccess;
    private final AtomicLong uploadedBytes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    void coordinating(Running running) {
        coordinated = running;
    }

    void taking(Running running) {
        part = running;
    }

    void partDone(Part done) {
        part = null;
        last = done;
        if (done.error() == null) {
            lastSuccess = done;
        } else {
            failures.incrementAndGet();
        }
    }

    /** A backup this node coordinated failed (counted apart from its own part's failures). */
    void coordinatedFailed() {
        failures.incrementAndGet();
    }

    void uploaded(long bytes) {
        uploadedBytes.addAndGet(bytes);
    }

    /** The backup under way here: the one coordinated, else this node's part; null when none. */
    public Running running() {
        Running running = coordinated;
        return running != null ? running : part;
    }

    /** This node's last part, ok or failed; null before any. */
    public Part last() {
        return last;
    }

    /** This node's last part stored whole; null before any. */
    public Part lastSuccess() {
        return lastSuccess;
    }

    /** Bytes of files this node sent to the target since it started. */
    public long uploadedBytes() {
        return uploadedBytes.get();
    }

    /** Parts of this node and backups it coordinated that failed, since it started. */
    public long failures() {
        return failures.get();
    }
}
