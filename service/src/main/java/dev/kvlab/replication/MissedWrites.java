package dev.kvlab.replication;

import dev.kvlab.storage.Record;

/** Where a coordinator reports a write a remote replica missed (its call failed or timed out): hints. */
@FunctionalInterface
public interface MissedWrites {

    /** {@code node} did not take {@code record} of {@code key}. Returns at once; keeping it is best effort. */
    void missed(String node, byte[] key, Record record);

    MissedWrites NONE = (node, key, record) -> { };
}
