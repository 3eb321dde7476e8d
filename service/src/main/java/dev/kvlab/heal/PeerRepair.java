package dev.kvlab.heal;

/**
 * What this node knows of its repair rounds with one peer: the last round it ran, and the start of
 * the last round either side completed (tombstones wait for it). Updated by one round at a time.
 */
final class PeerRepair {

    /** When nothing happened yet. */
    static final long NEVER = 0;

    private volatile Round last;
    private volatile ChangesSeen changesSeen = ChangesSeen.NONE;
    private volatile long lastCompleteStartedMillis = NEVER;
    /** When the last round between the two ended, whichever side ran it: the next is due an interval later. */
    private volatile long lastEndedMillis = NEVER;
    private volatile long retryAtMillis = NEVER;
    private volatile boolean requested;
    private volatile boolean running;

    /**
     * One round this node ran with the peer: when, how it ended, how many of the buckets differed
     * and how many of those the keys changed recently explained (compared without a scan: {@link ChangedKeyComparison}),
     * the keys it compared one by one, the records it sent and received, and the records it read
     * from its own store for the round (none when nothing changed since the last one and nothing differs).
     */
    record Round(long startedMillis, long finishedMillis, boolean complete, String outcome, int bucketsDiffering,
                 int bucketsByChangedKeys, long keysCompared, long recordsSent, long recordsReceived, long recordsRead) {
    }

    /**
     * The updates of the bucket hashes, on this side and the peer's, that the last complete round this
     * node ran compared: the next compares the keys changed after them, not every change kept.
     */
    record ChangesSeen(long mine, long theirs) {
        static final ChangesSeen NONE = new ChangesSeen(0, 0);
    }

    /** Whether a round is due: asked for, to be tried again, or (when {@code periodic}) an interval after the last. */
    boolean due(long now, long intervalMillis, boolean periodic) {
        if (running) {
            return false;
        }
        if (retryAtMillis != NEVER) {
            return now >= retryAtMillis;
        }
        return requested || periodic && now >= lastEndedMillis + intervalMillis;
    }

    void started() {
        running = true;
        requested = false;
    }

    void ended(Round round, long retryAfterFailureMillis) {
        last = round;
        lastEndedMillis = round.finishedMillis();
        if (round.complete()) {
            completed(round.startedMillis(), round.finishedMillis());
            retryAtMillis = NEVER;
        } else {
            retryAtMillis = round.finishedMillis() + retryAfterFailureMillis;
        }
        running = false;
    }

    /** A round begun at {@code startedMillis} covered everything the two share. */
    void completed(long startedMillis, long endedMillis) {
        lastCompleteStartedMillis = Math.max(lastCompleteStartedMillis, startedMillis);
        lastEndedMillis = Math.max(lastEndedMillis, endedMillis);
    }

    /** A round with the peer is wanted as soon as possible: on demand, or after a topology change. */
    void request() {
        requested = true;
        retryAtMillis = NEVER;
    }

    ChangesSeen changesSeen() {
        return changesSeen;
    }

    /** A round that completed compared the changes up to {@code seen}. */
    void changesSeen(ChangesSeen seen) {
        changesSeen = seen;
    }

    Round last() {
        return last;
    }

    long lastCompleteStartedMillis() {
        return lastCompleteStartedMillis;
    }

    boolean running() {
        return running;
    }
}
