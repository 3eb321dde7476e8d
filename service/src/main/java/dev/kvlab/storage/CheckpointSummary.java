package dev.kvlab.storage;

/**
 * The records of a checkpoint ({@link RocksStore#summarize}): how many (values and tombstones), how
 * many tombstones, and their oldest and newest versions (null when there is none).
 */
public record CheckpointSummary(long keys, long tombstones, Version minVersion, Version maxVersion) {

    /** Adds up headers one by one. */
    static final class Counter {
        private long keys;
        private long tombstones;
        private Version min;
        private Version max;

        void add(RecordHeader header) {
            keys++;
            if (header.tombstone()) {
                tombstones++;
            }
            Version version = header.version();
            if (min == null || min.isNewerThan(version)) {
                min = version;
            }
            if (max == null || version.isNewerThan(max)) {
                max = version;
            }
        }

        CheckpointSummary summary() {
            return new CheckpointSummary(keys, tombstones, min, max);
        }
    }
}
