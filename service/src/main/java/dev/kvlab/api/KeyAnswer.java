package dev.kvlab.api;

import dev.kvlab.memory.MemoryBudget;
import dev.kvlab.storage.Record;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One key's answer in a multi-get: its record when found, nothing when absent, or the failure that
 * kept its replicas from answering. The record's bytes stay on the budget ({@code lease}) until the
 * answer is written out or dropped: {@link #release} gives them back, once.
 */
final class KeyAnswer {

    private final byte[] key;
    private final Record record;
    private final Throwable failure;
    private final MemoryBudget.Lease lease;
    private final AtomicBoolean released;

    private KeyAnswer(byte[] key, Record record, Throwable failure, MemoryBudget.Lease lease, AtomicBoolean released) {
        this.key = key;
        this.record = record;
        this.failure = failure;
        this.lease = lease;
        this.released = released;
    }

    /** {@code released} is shared with whoever else may release the same lease (a cancelled read). */
    static KeyAnswer found(byte[] key, Record record, MemoryBudget.Lease lease, AtomicBoolean released) {
        return new KeyAnswer(key, record, null, lease, released);
    }

    static KeyAnswer missing(byte[] key, MemoryBudget.Lease lease, AtomicBoolean released) {
        return new KeyAnswer(key, null, null, lease, released);
    }

    static KeyAnswer failed(byte[] key, Throwable failure, MemoryBudget.Lease lease, AtomicBoolean released) {
        return new KeyAnswer(key, null, failure, lease, released);
    }

    byte[] key() {
        return key;
    }

    /** The live record; null when the key is absent or failed. */
    Record record() {
        return record;
    }

    /** Why the key has no answer; null when it has one (found or absent). */
    Throwable failure() {
        return failure;
    }

    void release() {
        if (released.compareAndSet(false, true)) {
            lease.release();
        }
    }
}
