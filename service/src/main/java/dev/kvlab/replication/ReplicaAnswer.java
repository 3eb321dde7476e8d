package dev.kvlab.replication;

import dev.kvlab.storage.Record;

/** What one replica returned for a read: its record, or {@code null} when it has none. */
record ReplicaAnswer(Replica replica, Record record) {

    /** The newest record among the answers; {@code null} when none has the key. */
    static Record newest(Iterable<ReplicaAnswer> answers) {
        Record newest = null;
        for (ReplicaAnswer answer : answers) {
            Record record = answer.record();
            if (record != null && (newest == null || record.version().isNewerThan(newest.version()))) {
                newest = record;
            }
        }
        return newest;
    }
}
