package dev.kvlab.backup;

import java.util.List;

/**
 * A whole backup: written last, once every node's part is stored, so a backup with this manifest
 * is complete.
 *
 * @param format        the manifest's format, {@link NodeManifest#FORMAT}
 * @param name          the backup's name
 * @param cutMillis     when the backup started
 * @param finishedMillis when its last node's part was stored
 * @param kvlabVersion  the version of kvlab that wrote it
 * @param guarantee     which writes it holds, in words
 * @param topology      the cluster's nodes, in order; node {@code i}'s manifest is {@code nodes/i.json}
 * @param nodes         each node's part, in topology order
 */
public record ClusterManifest(int format, String name, long cutMillis, long finishedMillis, String kvlabVersion,
                              String guarantee, List<String> topology, List<Part> nodes) {

    public ClusterManifest {
        BackupLayout.checkedName(name);
        topology = List.copyOf(topology);
        nodes = List.copyOf(nodes);
    }

    /** One node's part: enough to list a backup without reading every node's manifest. */
    public record Part(int index, String node, long keys, long bytes, long uploadedBytes, int files, long durationMillis) {
    }
}
