package dev.kvlab.backup;

import static dev.kvlab.backup.HandMadeBackups.records;
import static dev.kvlab.storage.TestStores.value;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kvlab.storage.RocksStore;
import dev.kvlab.storage.TestStores;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code restore} and {@code backups} commands: their arguments, settings, messages and exit codes. */
class RestoreCommandTest {

    @TempDir
    Path root;
    Path targetDir;
    HandMadeBackups backups;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void target() {
        targetDir = root.resolve("target");
        backups = new HandMadeBackups(new DirectoryTarget(targetDir), root.resolve("work"));
    }

    private int restore(Map<String, String> env, String... args) {
        out.reset();
        err.reset();
        return RestoreCommand.run(List.of(args), env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private int restore(String... args) {
        return restore(Map.of("KVLAB_BACKUP_TARGET", targetDir.toString()), args);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void restoresWithTheTargetFromTheEnvironmentAndSaysWhatItDid() throws Exception {
        backups.complete("b1", 1_000, List.of(records("a", value(1, "x")), records("b", value(2, "y"))));
        Path data = root.resolve("n0");

        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(0);
        assertThat(out()).contains("holds backup b1: its node(s) [0, 1]").contains("records merged");
        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            assertThat(store.get(TestStores.bytes("a"))).isNotNull();
            assertThat(store.get(TestStores.bytes("b"))).isNotNull();
        }

        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(0);
        assertThat(out()).contains("nothing to do");
    }

    @Test
    void theCommandLineWinsOverTheEnvironment() throws Exception {
        backups.complete("b1", 1_000, List.of(records("a", value(1, "x"))));
        int code = restore(Map.of("KVLAB_BACKUP_TARGET", root.resolve("elsewhere").toString()),
                "--backup=b1", "--data=" + root.resolve("n0"), "--nodes=1", "--index=0", "--kvlab.backup.target=" + targetDir);
        assertThat(code).isEqualTo(0);
    }

    @Test
    void exitCodesSayWhatWentWrong() throws Exception {
        backups.complete("b1", 1_000, List.of(records("a", value(1, "x"))));
        NodeManifest part = Manifests.read(backups.target.read(BackupLayout.nodeManifest("b1", 0)), NodeManifest.class, "node 0");
        Path data = root.resolve("n0");

        assertThat(restore("--backup=b1", "--nodes=1", "--index=0")).isEqualTo(2);
        assertThat(err()).contains("--data=DIR is missing").contains("usage:");
        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=2", "--index=2")).isEqualTo(2);
        assertThat(err()).contains("--index");
        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=two", "--index=0")).isEqualTo(2);
        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=1", "--index=0", "--frce")).isEqualTo(2);
        assertThat(err()).contains("unknown option --frce");
        assertThat(restore("--backup=../b1", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(2);
        assertThat(restore("--backup=b2", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(2);
        assertThat(err()).contains("no complete backup b2");
        assertThat(restore(Map.of(), "--backup=b1", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(2);
        assertThat(err()).contains("no backup target");

        try (RocksStore store = RocksStore.open(TestStores.properties(data))) {
            store.write(TestStores.bytes("old"), value(1, "old"));
        }
        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=1", "--index=0")).isEqualTo(3);
        assertThat(err()).contains("holds data").contains("--force");

        HandMadeBackups.corruptOneByte(targetDir, part, 100);
        assertThat(restore("--backup=b1", "--data=" + data, "--nodes=1", "--index=0", "--force")).isEqualTo(4);
        assertThat(err()).contains("backup b1 node 0 file");
    }

    @Test
    void backupsListsTheCompleteOnesNewestFirst() throws Exception {
        backups.complete("older", 1_000, List.of(records("a", value(1, "x")), records("b", value(1, "y"))));
        backups.complete("newer", 2_000, List.of(records("a", value(1, "x"))));
        backups.nodeParts("unfinished", 3_000, List.of(records("a", value(1, "x"))));
        out.reset();
        int code = BackupsCommand.run(List.of("--kvlab.backup.target=" + targetDir), Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(0);
        assertThat(out().lines().toList()).hasSize(2);
        assertThat(out().lines().toList().get(0)).startsWith("newer\t1970-01-01T00:00:02Z\t1 nodes\t1 keys\t");
        assertThat(out().lines().toList().get(1)).startsWith("older\t1970-01-01T00:00:01Z\t2 nodes\t2 keys\t");
    }
}
