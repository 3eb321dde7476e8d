package dev.kvlab.backup;

import dev.kvlab.storage.CheckpointSummary;
import dev.kvlab.storage.LocalStore;
import dev.kvlab.storage.RocksStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Takes this node's part of a backup, on the backup thread: a RocksDB checkpoint in a directory
 * inside the storage directory (a flush and hard links, beside the node's reads and writes); then
 * the checksum of every file, its records counted, the files the target lacks uploaded as blobs
 * (these three read at the backup's {@link BackupPace}), the node's manifest written, and the
 * checkpoint deleted. One part at a time.
 */
public final class NodeSnapshots {

    private static final Logger log = LoggerFactory.getLogger(NodeSnapshots.class);
    /** Checkpoints are taken into directories of this prefix in the storage directory. */
    static final String CHECKPOINT_PREFIX = ".kvlab-backup-";

    private final LocalStore store;
    private final Path storageDir;
    private final ConfiguredTarget target;
    private final BackupThread thread;
    private final BackupStatus status;
    private final LongSupplier wallMillis;
    private final String kvlabVersion;
    private final BackupPace pace;
    private final FileDigests digests;
    private final AtomicBoolean taking = new AtomicBoolean();

    public NodeSnapshots(LocalStore store, Path storageDir, ConfiguredTarget target, BackupThread thread, BackupPace pace,
                         BackupStatus status, LongSupplier wallMillis, String kvlabVersion) {
        this.store = store;
        this.storageDir = storageDir.toAbsolutePath().normalize();
        this.target = target;
        this.thread = thread;
        this.pace = pace;
        this.digests = new FileDigests(pace);
        this.status = status;
        this.wallMillis = wallMillis;
        this.kvlabVersion = kvlabVersion;
    }

    /**
     * This node's part of {@code snapshot.backup()}: its manifest once every file and the manifest
     * are stored. Fails with 409 while another part runs here.
     */
    public Mono<NodeManifest> take(BackupCalls.Snapshot snapshot) {
        return Mono.defer(() -> {
            BackupTarget to = target.get();
            if (!taking.compareAndSet(false, true)) {
                return Mono.error(BackupFailure.busy("this node is taking its part of another backup now"));
            }
            long started = wallMillis.getAsLong();
            status.taking(new BackupStatus.Running(snapshot.backup(), started, false));
            Path checkpoint = storageDir.resolve(CHECKPOINT_PREFIX + snapshot.backup());
            return Mono.fromCallable(() -> {
                        removeLeftovers();
                        store.checkpoint(checkpoint);
                        return wallMillis.getAsLong();
                    })
                    .subscribeOn(thread.scheduler())
                    .map(created -> {
                        try {
                            return store(to, snapshot, checkpoint, created);
                        } finally {
                            delete(checkpoint);
                        }
                    })
                    .doOnNext(manifest -> status.partDone(new BackupStatus.Part(snapshot.backup(), started, wallMillis.getAsLong(),
                            manifest.bytes(), manifest.uploadedBytes(), manifest.keys(), to.describe(), null)))
                    .doOnError(error -> {
                        log.warn("this node's part of backup {} failed: {}", snapshot.backup(), error.toString());
                        status.partDone(new BackupStatus.Part(snapshot.backup(), started, wallMillis.getAsLong(), 0, 0, 0,
                                to.describe(), String.valueOf(error.getMessage())));
                    })
                    .doFinally(signal -> taking.set(false));
        });
    }

    /** The checkpoint's files checked, counted, sent where the target lacks them, and the manifest written. Blocking. */
    private NodeManifest store(BackupTarget to, BackupCalls.Snapshot snapshot, Path checkpoint, long createdMillis) {
        try {
            // Listed before the checkpoint is opened to count its records: that open writes a LOG file in it.
            List<Path> paths;
            try (Stream<Path> listed = Files.list(checkpoint)) {
                paths = listed.filter(Files::isRegularFile).sorted(Comparator.comparing(Path::getFileName)).toList();
            }
            List<FileEntry> files = new ArrayList<>(paths.size());
            Set<String> seen = new HashSet<>();
            long bytes = 0;
            for (Path path : paths) {
                long size = Files.size(path);
                files.add(new FileEntry(path.getFileName().toString(), size, digests.of(path, size)));
                seen.add(path.getFileName() + "/" + size);
                bytes += size;
            }
            digests.retainOnly(seen);
            CheckpointSummary records = RocksStore.summarize(checkpoint, pace.taker());
            long uploaded = 0;
            for (int i = 0; i < files.size(); i++) {
                FileEntry file = files.get(i);
                String key = BackupLayout.blob(file.sha256());
                // Incremental: a blob is named by its content, so one stored already is this file.
                if (!to.exists(key)) {
                    to.put(key, paths.get(i), pace);
                    uploaded += file.bytes();
                    status.uploaded(file.bytes());
                }
            }
            long now = wallMillis.getAsLong();
            NodeManifest manifest = new NodeManifest(NodeManifest.FORMAT, snapshot.backup(), snapshot.index(),
                    snapshot.topology().get(snapshot.index()), snapshot.topology(), snapshot.cutMillis(), createdMillis,
                    now - createdMillis, kvlabVersion, records.keys(), records.tombstones(),
                    records.minVersion() == null ? null : records.minVersion().toString(),
                    records.maxVersion() == null ? null : records.maxVersion().toString(), bytes, uploaded, files);
            to.put(BackupLayout.nodeManifest(snapshot.backup(), snapshot.index()), Manifests.write(manifest));
            log.info("backup {}: this node's part stored in {}: {} records, {} files, {} bytes, {} of them sent",
                    snapshot.backup(), to.describe(), records.keys(), files.size(), bytes, uploaded);
            return manifest;
        } catch (IOException e) {
            throw new UncheckedIOException("backup " + snapshot.backup() + " could not be stored in " + to.describe() + ": " + e.getMessage(), e);
        }
    }

    /** Removes, on the backup thread, the checkpoints a part that did not end left behind; as the node starts. */
    public void removeLeftoversSoon() {
        Mono.fromRunnable(this::removeLeftovers).subscribeOn(thread.scheduler())
                .subscribe(done -> { }, error -> log.warn("{}", error.getMessage()));
    }

    /** Checkpoints left by a part that did not end (the node stopped meanwhile): they hold disk space. */
    private void removeLeftovers() {
        try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(storageDir, CHECKPOINT_PREFIX + "*")) {
            for (Path leftover : leftovers) {
                log.info("removing the checkpoint {} of a backup that did not end", leftover);
                delete(leftover);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot look for leftover checkpoints in " + storageDir + ": " + e.getMessage(), e);
        }
    }

    /** Deletes the checkpoint: its hard links only, the store keeps its own files. */
    static void delete(Path dir) {
        try {
            LocalFiles.deleteTree(dir);
        } catch (IOException e) {
            log.warn("could not delete the checkpoint {}: {}", dir, e.toString());
        }
    }
}
