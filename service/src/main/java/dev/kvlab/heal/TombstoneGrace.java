package dev.kvlab.heal;

import dev.kvlab.replication.HybridLogicalClock;
import dev.kvlab.storage.RecordHeader;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * When a delete's tombstone may go. A tombstone stays at least {@code grace} after its delete (as
 * Cassandra's {@code gc_grace_seconds}: a replica that missed the delete gets it by then, from the
 * write itself, its hint, or repair). After that a replica purges it once a repair round with every
 * other owner of its key has completed that began after the grace ended: each of them then holds
 * the tombstone or has purged it too, so no copy of the deleted value is left to come back.
 * Until both have purged it, a repair round copies no tombstone past its grace to a replica that
 * lacks it.
 *
 * <p>An expired value is dead as a tombstone of its version is, from its expiry on: its grace counts
 * from then (a replica that missed the write may hold an older value until repair brings it the
 * expired one), and once reaped ({@link dev.kvlab.storage.Record#reaped}) it is purged as a tombstone.
 *
 * <p>A round covers the records older than its start by {@code settle}, the replicas' timeout: a
 * younger write may still be on its way to a replica (its coordinator waits for it that long, then
 * keeps a hint), so a round leaves it to its coordinator, and to the next round. Under a steady
 * write load, without this, every round would copy again the writes still in flight.
 */
final class TombstoneGrace {

    private final long graceMillis;
    private final long settleMillis;
    private final LongSupplier wallMillis;

    TombstoneGrace(Duration grace, Duration settle, LongSupplier wallMillis) {
        this.graceMillis = grace.toMillis();
        this.settleMillis = settle.toMillis();
        this.wallMillis = wallMillis;
    }

    /** Whether a round begun at {@code roundStartedMillis} covers the record: written long enough before it. */
    boolean covered(RecordHeader header, long roundStartedMillis) {
        return HybridLogicalClock.wallMillisOf(header.version()) <= roundStartedMillis - settleMillis;
    }

    /** A dead record (a tombstone, or expired) whose grace has ended: a replica that lacks it needs it no more. */
    boolean forgettable(RecordHeader header) {
        long now = wallMillis.getAsLong();
        return header.deadAt(now) && graceEnds(header) < now;
    }

    /**
     * A tombstone {@code self} may purge: its grace has ended, and every other of its key's
     * {@code owners} completed a repair round with {@code self} that covered it.
     */
    boolean purgeable(RecordHeader header, List<String> owners, String self, ToLongFunction<String> lastCompleteRoundStarted) {
        if (!header.tombstone() || !forgettable(header)) {
            return false;
        }
        long graceEnds = graceEnds(header);
        for (String owner : owners) {
            if (!owner.equals(self) && lastCompleteRoundStarted.applyAsLong(owner) - settleMillis <= graceEnds) {
                return false;
            }
        }
        return true;
    }

    /** The grace counts from the delete, or from the expiry of an expiring write (always after its version's time). */
    private long graceEnds(RecordHeader header) {
        long dead = header.expires() ? header.expiresAtMillis() : HybridLogicalClock.wallMillisOf(header.version());
        return dead + graceMillis;
    }
}
