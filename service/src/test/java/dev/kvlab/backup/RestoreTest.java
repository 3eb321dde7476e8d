package dev.kvlab.backup;

import static dev.kvlab.backup.HandMadeBackups.records;
import static dev.kvlab.storage.TestStores.bytes;
import static dev.kvlab.storage.TestStores.text;
import static dev.kvlab.storage.TestStores.tombstone;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kvlab.storage.Record;
import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.TestStores;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Restore} of hand-made backups in a directory target into real RocksDB stores. */
class RestoreTest {

    @TempDir
    Path root;
    Path targetDir;
    HandMadeBackups backups;
    final List<String> progress = new ArrayList<>();

    @BeforeEach
    void target() {
        targetDir = root.resolve("target");
        backups = new HandMadeBackups(new DirectoryTarget(targetDir), root.resolve("work"));
    }

    private Restore.Result restore(String backup, Path data, int nodes, int index, boolean force) throws Exception {
        return new Restore(backups.target, TestStores.properties(root.resolve("unused")), progress::add)
                .run(new Restore.Request(backup, data, nodes, index, force));
    }

    /** Every record of the store in {@code dir}, key to record. */
    private static Map<String, Record> contents(Path dir) {
        Map<String, Record> found = new TreeMap<>();
        try (RocksStore store = RocksStore.open(TestStores.properties(dir)); var cursor = store.range(new byte[0], null)) {
            cursor.forEachRemaining(entry -> found.put(new String(entry.key(), java.nio.charset.StandardCharsets.UTF_8),
                    entry.record()));
        }
        return found;
    }

    private static Map<String, String> described(Map<String, Record> records) {
        Map<String, String> described = new TreeMap<>();
        records.forEach((key, record) -> described.put(key, record.isTombstone()
                ? "tombstone@" + record.version().timestamp() : text(record) + "@" + record.version().timestamp()));
        return described;
    }

    /** Every file under {@code dir} with its bytes, to see that nothing changed. */
    private static Map<String, String> snapshot(Path dir) throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path file : walk.filter(Files::isRegularFile).toList()) {
                files.put(dir.relativize(file).toString(), java.util.HexFormat.of().formatHex(Files.readAllBytes(file)));
            }
        }
        return files;
    }

    @Test
    void restoresEachNodeOfAClusterOfTheSameSize() throws Exception {
        backups.complete("b1", 1_000, List.of(
                records("a", value(10, "a0"), "b", tombstone(11)),
                records("c", value(12, "c1")),
                records("d", value(13, "d2"), "a", value(9, "a-old"))));

        for (int i = 0; i < 3; i++) {
            Path data = root.resolve("n" + i);
            Restore.Result result = restore("b1", data, 3, i, false);
            assertThat(result.parts()).containsExactly(i);
            assertThat(result.merged()).isZero();
            assertThat(Restore.restoredBackup(data)).isEqualTo("b1");
            assertThat(data.resolve(Restore.STAGING)).doesNotExist();
        }
        assertThat(described(contents(root.resolve("n0")))).containsExactly(Map.entry("a", "a0@10"), Map.entry("b", "tombstone@11"));
        assertThat(described(contents(root.resolve("n1")))).containsExactly(Map.entry("c", "c1@12"));
        assertThat(described(contents(root.resolve("n2")))).containsExactly(Map.entry("a", "a-old@9"), Map.entry("d", "d2@13"));
    }

    @Test
    void mergingNodesKeepsTheNewestVersionOfEachKeyTombstonesIncluded() throws Exception {
        backups.complete("b1", 1_000, List.of(
                records("newer-on-1", value(10, "old"), "newer-on-0", value(30, "kept"), "deleted-on-1", value(5, "gone"),
                        "only-on-0", value(1, "x")),
                records("newer-on-1", value(20, "new"), "newer-on-0", tombstone(25), "deleted-on-1", tombstone(6),
                        "only-on-1", value(2, "y"))));

        Restore.Result result = restore("b1", root.resolve("one"), 1, 0, false);

        assertThat(result.parts()).containsExactly(0, 1);
        assertThat(result.merged()).isEqualTo(4);
        assertThat(described(contents(root.resolve("one")))).containsExactly(
                Map.entry("deleted-on-1", "tombstone@6"),
                Map.entry("newer-on-0", "kept@30"),
                Map.entry("newer-on-1", "new@20"),
                Map.entry("only-on-0", "x@1"),
                Map.entry("only-on-1", "y@2"));
    }

    @Test
    void aClusterOfAnotherSizeTakesTheNodesByIndexModuloItsSize() throws Exception {
        backups.complete("b1", 1_000, List.of(records("k0", value(1, "0")), records("k1", value(1, "1")),
                records("k2", value(1, "2"))));

        assertThat(restore("b1", root.resolve("two-0"), 2, 0, false).parts()).containsExactly(0, 2);
        assertThat(restore("b1", root.resolve("two-1"), 2, 1, false).parts()).containsExactly(1);
        assertThat(contents(root.resolve("two-0"))).containsOnlyKeys("k0", "k2");
        assertThat(contents(root.resolve("two-1"))).containsOnlyKeys("k1");

        Path empty = root.resolve("four-3");
        Restore.Result none = restore("b1", empty, 4, 3, false);
        assertThat(none.parts()).isEmpty();
        assertThat(Restore.restoredBackup(empty)).isEqualTo("b1");
        try (Stream<Path> files = Files.list(empty)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactly(Restore.MARKER);
        }
    }

    @Test
    void aCorruptedFileIsRefusedAndTheDirectoryIsNotTouched() throws Exception {
        List<NodeManifest> nodes = new ArrayList<>();
        backups.complete("b1", 1_000, List.of(records("a", value(10, "a0"))));
        nodes.add(Manifests.read(backups.target.read(BackupLayout.nodeManifest("b1", 0)), NodeManifest.class, "node 0"));
        Path data = root.resolve("n0");
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            store.write(bytes("old"), value(1, "data"));
        }
        Map<String, String> before = snapshot(data);
        HandMadeBackups.corruptOneByte(targetDir, nodes.getFirst(), 100);

        assertThatThrownBy(() -> restore("b1", data, 1, 0, true))
                .isInstanceOfSatisfying(RestoreFailure.class, e -> assertThat(e.exitCode()).isEqualTo(RestoreFailure.NOT_VERIFIED))
                .hasMessageContaining("backup b1 node 0 file ")
                .hasMessageContaining("SHA-256");
        assertThat(snapshot(data)).isEqualTo(before);
        assertThat(data.resolve(Restore.STAGING)).doesNotExist();
    }

    @Test
    void aMissingFileIsRefusedToo() throws Exception {
        backups.complete("b1", 1_000, List.of(records("a", value(10, "a0"))));
        NodeManifest node = Manifests.read(backups.target.read(BackupLayout.nodeManifest("b1", 0)), NodeManifest.class, "node 0");
        backups.target.delete(BackupLayout.blob(node.files().getFirst().sha256()));

        assertThatThrownBy(() -> restore("b1", root.resolve("n0"), 1, 0, false))
                .isInstanceOfSatisfying(RestoreFailure.class, e -> assertThat(e.exitCode()).isEqualTo(RestoreFailure.NOT_VERIFIED))
                .hasMessageContaining("is missing");
        assertThat(root.resolve("n0").resolve(Restore.MARKER)).doesNotExist();
    }

    @Test
    void aDirectoryWithDataIsReplacedOnlyWithForce() throws Exception {
        backups.complete("b1", 1_000, List.of(records("restored", value(10, "r"))));
        Path data = root.resolve("n0");
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            store.write(bytes("old"), value(1, "data"));
        }
        Files.createDirectories(data.resolve("lost+found"));
        Map<String, String> before = snapshot(data);

        assertThatThrownBy(() -> restore("b1", data, 1, 0, false))
                .isInstanceOfSatisfying(RestoreFailure.class, e -> assertThat(e.exitCode()).isEqualTo(RestoreFailure.DATA_PRESENT))
                .hasMessageContaining(data + " holds data").hasMessageContaining("--force");
        assertThat(snapshot(data)).isEqualTo(before);

        restore("b1", data, 1, 0, true);
        assertThat(described(contents(data))).containsExactly(Map.entry("restored", "r@10"));
        assertThat(data.resolve("lost+found")).isDirectory();
    }

    @Test
    void aDirectoryThatARunningNodeHoldsIsRefusedEvenWithForce() throws Exception {
        backups.complete("b1", 1_000, List.of(records("restored", value(10, "r"))));
        Path data = root.resolve("n0");
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            store.write(bytes("old"), value(1, "data"));
        }
        Map<String, String> before = snapshot(data);
        // Another process holds the LOCK file's lock as RocksDB does (fcntl): a node running on it.
        Process node = new ProcessBuilder("python3", "-c", "import fcntl, sys, time\n"
                + "f = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(120)",
                data.resolve("LOCK").toString()).redirectErrorStream(true).start();
        try {
            assertThat(new java.io.BufferedReader(new java.io.InputStreamReader(node.getInputStream())).readLine())
                    .isEqualTo("locked");
            assertThatThrownBy(() -> restore("b1", data, 1, 0, true))
                    .isInstanceOf(IOException.class).hasMessageContaining("a node runs on " + data);
            assertThat(snapshot(data)).isEqualTo(before);
        } finally {
            node.destroyForcibly().waitFor();
        }
        restore("b1", data, 1, 0, true);
        assertThat(contents(data)).containsOnlyKeys("restored");
    }

    @Test
    void aFreshVolumeIsNoData() throws Exception {
        backups.complete("b1", 1_000, List.of(records("restored", value(10, "r"))));
        Path data = root.resolve("n0");
        Files.createDirectories(data.resolve("lost+found"));
        restore("b1", data, 1, 0, false);
        assertThat(contents(data)).containsOnlyKeys("restored");
    }

    @Test
    void aSecondRunOnARestoredDirectoryDoesNothing() throws Exception {
        backups.complete("b1", 1_000, List.of(records("restored", value(10, "r"))));
        Path data = root.resolve("n0");
        restore("b1", data, 1, 0, false);
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            store.write(bytes("written-after"), value(20, "w"));
        }

        Restore.Result again = restore("b1", data, 1, 0, true);
        Restore.Result latest = restore(BackupCatalog.LATEST, data, 1, 0, true);

        assertThat(again.already()).isTrue();
        assertThat(latest.already()).isTrue();
        assertThat(contents(data)).containsOnlyKeys("restored", "written-after");
    }

    @Test
    void latestIsTheNewestCompleteBackup() throws Exception {
        backups.complete("old", 1_000, List.of(records("k", value(1, "old"))));
        backups.complete("newest-complete", 2_000, List.of(records("k", value(2, "newest-complete"))));
        backups.nodeParts("unfinished", 3_000, List.of(records("k", value(3, "unfinished"))));

        Restore.Result result = restore(BackupCatalog.LATEST, root.resolve("n0"), 1, 0, false);

        assertThat(result.backup()).isEqualTo("newest-complete");
        assertThat(described(contents(root.resolve("n0")))).containsExactly(Map.entry("k", "newest-complete@2"));
        assertThatThrownBy(() -> restore("unfinished", root.resolve("n1"), 1, 0, false))
                .isInstanceOfSatisfying(RestoreFailure.class, e -> assertThat(e.exitCode()).isEqualTo(RestoreFailure.NO_SUCH_BACKUP))
                .hasMessageContaining("no complete backup unfinished");
        assertThat(new BackupCatalog(backups.target).complete()).extracting(ClusterManifest::name)
                .containsExactly("newest-complete", "old");
    }

    @Test
    void aStagingDirectoryLeftByAFailedRunIsCleared() throws Exception {
        backups.complete("b1", 1_000, List.of(records("restored", value(10, "r"))));
        Path data = root.resolve("n0");
        Files.createDirectories(data.resolve(Restore.STAGING).resolve("0"));
        Files.writeString(data.resolve(Restore.STAGING).resolve("0").resolve("left-over-file"), "left over");
        restore("b1", data, 1, 0, false);
        assertThat(data.resolve("left-over-file")).doesNotExist();
        assertThat(contents(data)).containsOnlyKeys("restored");
    }
}
