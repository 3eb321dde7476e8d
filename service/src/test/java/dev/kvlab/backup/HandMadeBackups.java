package dev.kvlab.backup;

import dev.kvlab.storage.Record;
import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.TestStores;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Backups written by hand into a target, in the layout a real backup has ({@link BackupLayout}):
 * each node's snapshot is the directory of a real store, closed (its SST files, WAL and MANIFEST,
 * as a checkpoint holds them), every file stored as a blob under its SHA-256, then the node
 * manifests, then {@code backup.json} when the backup is complete.
 */
final class HandMadeBackups {

    final BackupTarget target;
    private final Path work;
    private int stores;

    HandMadeBackups(BackupTarget target, Path work) {
        this.target = target;
        this.work = work;
    }

    /** A complete backup of one node per map of records (key to record), cut at {@code cutMillis}. */
    ClusterManifest complete(String name, long cutMillis, List<Map<String, Record>> nodes) throws Exception {
        List<NodeManifest> parts = nodeParts(name, cutMillis, nodes);
        List<ClusterManifest.Part> summary = new ArrayList<>();
        for (NodeManifest part : parts) {
            summary.add(new ClusterManifest.Part(part.index(), part.node(), part.keys(), part.bytes(), part.uploadedBytes(),
                    part.files().size(), part.durationMillis()));
        }
        ClusterManifest manifest = new ClusterManifest(NodeManifest.FORMAT, name, cutMillis, cutMillis + 10, "test",
                "every write acknowledged before the cut", topology(nodes.size()), summary);
        target.put(BackupLayout.clusterManifest(name), Manifests.write(manifest));
        return manifest;
    }

    /** The nodes' parts of a backup, without its {@code backup.json}: a backup that did not finish. */
    List<NodeManifest> nodeParts(String name, long cutMillis, List<Map<String, Record>> nodes) throws Exception {
        List<NodeManifest> parts = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            parts.add(node(name, cutMillis, i, topology(nodes.size()), nodes.get(i)));
        }
        return parts;
    }

    private static List<String> topology(int size) {
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add("127.0.0.1:" + (9000 + i));
        }
        return nodes;
    }

    private NodeManifest node(String backup, long cutMillis, int index, List<String> topology, Map<String, Record> records)
            throws Exception {
        Path dir = work.resolve("store-" + stores++);
        try (RocksStore store = RocksStore.open(TestStores.properties(dir))) {
            records.forEach((key, record) -> store.write(TestStores.bytes(key), record));
        }
        List<FileEntry> files = new ArrayList<>();
        long bytes = 0;
        try (Stream<Path> list = Files.list(dir)) {
            for (Path file : list.sorted().toList()) {
                String name = file.getFileName().toString();
                if (name.equals("LOCK") || name.startsWith("LOG")) {
                    continue; // not in a checkpoint
                }
                String sha256 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
                target.put(BackupLayout.blob(sha256), file, BackupPace.unlimited());
                files.add(new FileEntry(name, Files.size(file), sha256));
                bytes += Files.size(file);
            }
        }
        long tombstones = records.values().stream().filter(Record::isTombstone).count();
        NodeManifest manifest = new NodeManifest(NodeManifest.FORMAT, backup, index, topology.get(index), topology, cutMillis,
                cutMillis + 1, 5, "test", records.size(), tombstones, null, null, bytes, bytes, files);
        target.put(BackupLayout.nodeManifest(backup, index), Manifests.write(manifest));
        return manifest;
    }

    /** Changes one byte of the first blob of the node's manifest that is bigger than {@code atLeast} bytes. */
    static void corruptOneByte(Path targetDir, NodeManifest node, long atLeast) throws IOException {
        FileEntry file = node.files().stream().filter(f -> f.bytes() >= atLeast).findFirst().orElseThrow();
        Path blob = targetDir.resolve(BackupLayout.blob(file.sha256()));
        byte[] bytes = Files.readAllBytes(blob);
        bytes[bytes.length / 2] ^= 1;
        Files.write(blob, bytes);
    }

    static Map<String, Record> records(Object... keysAndRecords) {
        Map<String, Record> records = new java.util.LinkedHashMap<>();
        for (int i = 0; i < keysAndRecords.length; i += 2) {
            records.put((String) keysAndRecords[i], (Record) keysAndRecords[i + 1]);
        }
        return records;
    }
}
