package dev.kvlab.backup;

/** One file of a node's snapshot: its name in the RocksDB directory, its size and its content's SHA-256 (hex). */
public record FileEntry(String name, long bytes, String sha256) {

    public FileEntry {
        if (name == null || name.isEmpty() || name.contains("/") || name.contains("\\") || name.startsWith(".")) {
            throw new IllegalArgumentException("a snapshot's file name is a plain name, got '" + name + "'");
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("file " + name + " has a negative size");
        }
        BackupLayout.blob(sha256);
    }
}
