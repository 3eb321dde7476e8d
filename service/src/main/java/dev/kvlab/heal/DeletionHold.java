package dev.kvlab.heal;

import java.util.function.LongSupplier;

/**
 * A backup's hold on deleting the records handoff has handed to their new owners: while it holds,
 * the old copies stay, so a record moving between two nodes during a backup is in the snapshot of
 * one of them at least. One backup holds at a time; a hold ends when released or at its deadline
 * (a coordinator that stopped mid-backup does not hold forever).
 */
final class DeletionHold {

    private final LongSupplier wallMillis;
    private String backup;
    private long untilMillis;

    DeletionHold(LongSupplier wallMillis) {
        this.wallMillis = wallMillis;
    }

    /**
     * Holds for {@code backup} until {@code untilMillis} (again: a later deadline); the backup
     * holding now, when another one holds.
     */
    synchronized String hold(String backup, long untilMillis) {
        if (active() && !this.backup.equals(backup)) {
            return this.backup;
        }
        this.backup = backup;
        this.untilMillis = untilMillis;
        return null;
    }

    synchronized void release(String backup) {
        if (backup.equals(this.backup)) {
            this.backup = null;
        }
    }

    /** Whether deletions are held now. */
    synchronized boolean active() {
        return backup != null && wallMillis.getAsLong() < untilMillis;
    }

    /** The backup holding now, or null. */
    synchronized String holder() {
        return active() ? backup : null;
    }
}
