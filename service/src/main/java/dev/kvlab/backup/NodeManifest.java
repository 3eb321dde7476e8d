package dev.kvlab.backup;

import java.util.List;

/**
 * What one node's part of a backup holds, written next to it in the target.
 *
 * @param format        the manifest's format, {@link #FORMAT}
 * @param backup        the backup's name
 * @param index         the node's place in {@code topology}
 * @param node          the node's name in the topology
 * @param topology      the cluster's nodes when the backup started, in order
 * @param cutMillis     when the backup started: every write acknowledged before it is held
 * @param createdMillis when the node's checkpoint was taken
 * @param durationMillis from the node's checkpoint to its last file stored
 * @param kvlabVersion  the version of kvlab that wrote it
 * @param keys          records held (values and tombstones)
 * @param tombstones    of which deletes
 * @param minVersion    the oldest record's version ({@code <timestamp>.<node>}), null when empty
 * @param maxVersion    the newest record's version, null when empty
 * @param bytes         the snapshot's size: every file's bytes
 * @param uploadedBytes the bytes this backup sent; the rest were stored already
 * @param files         every file of the RocksDB checkpoint, with its checksum
 */
public record NodeManifest(int format, String backup, int index, String node, List<String> topology, long cutMillis,
                           long createdMillis, long durationMillis, String kvlabVersion, long keys, long tombstones,
                           String minVersion, String maxVersion, long bytes, long uploadedBytes, List<FileEntry> files) {

    public static final int FORMAT = 1;

    public NodeManifest {
        BackupLayout.checkedName(backup);
        topology = List.copyOf(topology);
        files = List.copyOf(files);
        if (index < 0 || index >= topology.size()) {
            throw new IllegalArgumentException("node index " + index + " is outside a topology of " + topology.size());
        }
    }
}
