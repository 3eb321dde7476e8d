package dev.kvlab.backup;

import dev.kvlab.storage.Entry;
import dev.kvlab.storage.RangeCursor;
import dev.kvlab.storage.ReadOnlyRecords;
import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.StorageException;
import dev.kvlab.storage.StorageProperties;
import dev.kvlab.storage.StoreOp;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Restores one node's data directory from a backup, offline, before the node starts.
 *
 * <p>Node {@code index} of a cluster of {@code nodes} takes the backup's node parts
 * {@code {i : i mod nodes == index}} (none when the backup had fewer nodes: it starts empty and
 * receives its records by handoff). Every file is downloaded into {@code DIR/.kvlab-restore/} and
 * checked against its node's manifest, size and SHA-256; the first part's files are the RocksDB
 * directory, and the other parts' records are merged into it through the store's own write path,
 * where the newer version of a key wins. Only when all of that has worked is the data directory
 * touched: its old content removed (only with {@code force}), the new files moved in, and last the
 * marker {@code DIR/.kvlab-restored} written with the backup's name, so a restore that stopped
 * midway is never taken for one that finished, and one that finished is not done again.
 */
public final class Restore {

    public static final String STAGING = ".kvlab-restore";
    public static final String MARKER = ".kvlab-restored";
    /** What a fresh volume may hold that is no data: the file system's own directory. */
    private static final String MARKER_PARTIAL = MARKER + ".partial";
    private static final Set<String> NOT_DATA = Set.of(STAGING, MARKER, MARKER_PARTIAL, "lost+found");
    /** Records merged per write, and their bytes at most. */
    static final int BATCH_RECORDS = 1_000;
    static final long BATCH_BYTES = 4L * 1024 * 1024;

    private final BackupTarget target;
    private final StorageProperties storage;
    private final Consumer<String> progress;

    /**
     * @param storage  RocksDB's settings for the stores the restore opens (their directory is not used)
     * @param progress told what happens, a line at a time
     */
    public Restore(BackupTarget target, StorageProperties storage, Consumer<String> progress) {
        this.target = target;
        this.storage = storage;
        this.progress = progress;
    }

    /** What to restore where: {@code backup} a name or {@link BackupCatalog#LATEST}. */
    public record Request(String backup, Path data, int nodes, int index, boolean force) {

        public Request {
            if (nodes < 1) {
                throw new IllegalArgumentException("--nodes is the new cluster's size, at least 1; got " + nodes);
            }
            if (index < 0 || index >= nodes) {
                throw new IllegalArgumentException("--index is this node's place in the new cluster, 0 to " + (nodes - 1)
                        + "; got " + index);
            }
            data = data.toAbsolutePath().normalize();
        }
    }

    /**
     * What was done.
     *
     * @param backup  the backup restored, or the one restored before when nothing was to do
     * @param already the directory held this backup already: nothing was done
     * @param parts   the backup's node parts restored here
     * @param bytes   their files' bytes
     * @param merged  records merged in from the parts after the first
     */
    public record Result(String backup, boolean already, List<Integer> parts, long bytes, long merged) {
    }

    public Result run(Request request) throws RestoreFailure, IOException {
        Path data = request.data();
        String before = restoredBackup(data);
        if (before != null && (before.equals(request.backup()) || BackupCatalog.LATEST.equals(request.backup()))) {
            return new Result(before, true, List.of(), 0, 0);
        }
        ClusterManifest backup = new BackupCatalog(target).find(request.backup()).orElseThrow(() -> new RestoreFailure(
                RestoreFailure.NO_SUCH_BACKUP, BackupCatalog.LATEST.equals(request.backup())
                        ? "there is no complete backup in " + target.describe()
                        : "there is no complete backup " + request.backup() + " in " + target.describe()));
        requireNoNodeOn(data);
        List<String> held = dataIn(data);
        if (!held.isEmpty() && !request.force()) {
            throw new RestoreFailure(RestoreFailure.DATA_PRESENT, data + " holds data (" + String.join(", ", held.subList(0,
                    Math.min(5, held.size()))) + (held.size() > 5 ? ", ..." : "") + "): a restore replaces it only when "
                    + "asked to, with --force");
        }
        List<Integer> parts = new ArrayList<>();
        for (int i = request.index(); i < backup.topology().size(); i += request.nodes()) {
            parts.add(i);
        }
        Path staging = data.resolve(STAGING);
        LocalFiles.deleteTree(staging); // what a restore that failed midway left
        try {
            Files.createDirectories(staging);
            List<NodeManifest> manifests = new ArrayList<>();
            for (int part : parts) {
                manifests.add(nodeManifest(backup, part));
            }
            long bytes = manifests.stream().flatMap(m -> m.files().stream()).mapToLong(FileEntry::bytes).sum();
            long free = Files.getFileStore(staging).getUsableSpace();
            if (bytes > free) {
                throw new IOException(data + " has " + free + " bytes free, and the backup's files for this node take "
                        + bytes);
            }
            for (NodeManifest manifest : manifests) {
                download(manifest, staging.resolve(Integer.toString(manifest.index())));
            }
            long merged = 0;
            if (!parts.isEmpty()) {
                merged = merge(staging, parts);
            }
            requireNoNodeOn(data);
            replace(data, held, parts.isEmpty() ? null : staging.resolve(Integer.toString(parts.getFirst())));
            writeMarker(data, backup.name());
            return new Result(backup.name(), false, List.copyOf(parts), bytes, merged);
        } finally {
            try {
                LocalFiles.deleteTree(staging);
            } catch (IOException e) {
                progress.accept("could not remove " + staging + ": " + e.getMessage());
            }
        }
    }

    /** The backup named by the directory's marker, null when it has none. */
    public static String restoredBackup(Path data) throws IOException {
        try {
            return Files.readString(data.resolve(MARKER), StandardCharsets.UTF_8).strip();
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Refuses a directory that a running node has open: RocksDB holds a lock on its {@code LOCK}
     * file (an fcntl lock, as Java's file locks are) for as long as the store is open.
     */
    private static void requireNoNodeOn(Path data) throws IOException {
        Path lock = data.resolve("LOCK");
        if (!Files.isRegularFile(lock)) {
            return;
        }
        boolean free;
        try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.WRITE)) {
            FileLock held = channel.tryLock();
            free = held != null;
            if (free) {
                held.release();
            }
        } catch (OverlappingFileLockException e) {
            free = false;
        }
        if (!free) {
            throw new IOException("a node runs on " + data + " (its RocksDB holds " + lock + "): stop it before restoring");
        }
    }

    /** The names in {@code data} that are data: anything but the restore's own files and lost+found. */
    private static List<String> dataIn(Path data) throws IOException {
        if (!Files.isDirectory(data)) {
            if (Files.exists(data)) {
                throw new IOException(data + " is not a directory");
            }
            return List.of();
        }
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(data)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!NOT_DATA.contains(name)) {
                    names.add(name);
                }
            }
        }
        names.sort(Comparator.naturalOrder());
        return names;
    }

    private NodeManifest nodeManifest(ClusterManifest backup, int index) throws RestoreFailure, IOException {
        String key = BackupLayout.nodeManifest(backup.name(), index);
        String what = "backup " + backup.name() + " node " + index + "'s manifest";
        NodeManifest manifest;
        try {
            manifest = Manifests.read(target.read(key), NodeManifest.class, what);
        } catch (NoSuchFileException e) {
            throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, what + " (" + key + ") is missing from " + target.describe());
        } catch (IllegalArgumentException e) {
            throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, e.getMessage(), e);
        }
        if (manifest.format() != NodeManifest.FORMAT) {
            throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, what + " has format " + manifest.format()
                    + ", and this kvlab reads format " + NodeManifest.FORMAT + " (written by kvlab " + manifest.kvlabVersion() + ")");
        }
        if (!manifest.backup().equals(backup.name()) || manifest.index() != index) {
            throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, what + " is that of backup " + manifest.backup()
                    + " node " + manifest.index());
        }
        Set<String> names = new HashSet<>();
        for (FileEntry file : manifest.files()) {
            if (!names.add(file.name())) {
                throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, what + " lists the file " + file.name() + " twice");
            }
        }
        return manifest;
    }

    /** Downloads the node's files into {@code dir}, each checked against the manifest's size and SHA-256. */
    private void download(NodeManifest manifest, Path dir) throws RestoreFailure, IOException {
        Files.createDirectories(dir);
        progress.accept("node " + manifest.index() + " (" + manifest.node() + "): " + manifest.files().size() + " files, "
                + manifest.bytes() + " bytes, " + manifest.keys() + " records");
        for (FileEntry file : manifest.files()) {
            String where = "backup " + manifest.backup() + " node " + manifest.index() + " file " + file.name();
            MessageDigest sha256 = FileDigests.newDigest();
            long bytes;
            try (InputStream in = target.open(BackupLayout.blob(file.sha256()));
                 OutputStream out = new DigestOutputStream(Files.newOutputStream(dir.resolve(file.name())), sha256)) {
                bytes = in.transferTo(out);
            } catch (NoSuchFileException e) {
                throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, where + ": its content " + BackupLayout.blob(file.sha256())
                        + " is missing from " + target.describe());
            }
            String actual = HexFormat.of().formatHex(sha256.digest());
            if (bytes != file.bytes() || !actual.equals(file.sha256())) {
                throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, where + " is not the file the backup holds: "
                        + "expected " + file.bytes() + " bytes with SHA-256 " + file.sha256() + ", got " + bytes
                        + " bytes with SHA-256 " + actual);
            }
        }
    }

    /** Merges the records of every part after the first into the first's store; answers how many. */
    private long merge(Path staging, List<Integer> parts) throws RestoreFailure {
        int first = parts.getFirst();
        long merged = 0;
        try (RocksStore store = RocksStore.open(at(staging.resolve(Integer.toString(first))))) {
            for (int part : parts.subList(1, parts.size())) {
                long before = merged;
                try (ReadOnlyRecords records = ReadOnlyRecords.open(staging.resolve(Integer.toString(part)), storage);
                     RangeCursor cursor = records.all()) {
                    List<StoreOp.Write> batch = new ArrayList<>();
                    long batchBytes = 0;
                    while (cursor.hasNext()) {
                        Entry entry = cursor.next();
                        batch.add(new StoreOp.Write(entry.key(), entry.record()));
                        batchBytes += entry.key().length + entry.record().encoded().length;
                        if (batch.size() >= BATCH_RECORDS || batchBytes >= BATCH_BYTES) {
                            store.writeAll(batch);
                            merged += batch.size();
                            batch = new ArrayList<>();
                            batchBytes = 0;
                        }
                    }
                    if (!batch.isEmpty()) {
                        store.writeAll(batch);
                        merged += batch.size();
                    }
                }
                progress.accept("node " + part + ": merged " + (merged - before) + " records into node " + first + "'s");
            }
        } catch (StorageException e) {
            throw new RestoreFailure(RestoreFailure.NOT_VERIFIED, "the backup's files do not make a kvlab store: "
                    + e.getMessage(), e);
        }
        return merged;
    }

    private StorageProperties at(Path dir) {
        return storage.withDir(dir);
    }

    /** Removes the old data (names {@code held}), then moves the restored files in; {@code restored} null: none. */
    private static void replace(Path data, List<String> held, Path restored) throws IOException {
        Files.createDirectories(data);
        for (String name : held) {
            LocalFiles.deleteTree(data.resolve(name));
        }
        Files.deleteIfExists(data.resolve(MARKER));
        if (restored == null) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(restored)) {
            for (Path file : files) {
                Files.move(file, data.resolve(file.getFileName().toString()));
            }
        }
    }

    private static void writeMarker(Path data, String backup) throws IOException {
        Path partial = data.resolve(MARKER_PARTIAL);
        Files.writeString(partial, backup + "\n", StandardCharsets.UTF_8);
        LocalFiles.publish(partial, data.resolve(MARKER));
    }
}
